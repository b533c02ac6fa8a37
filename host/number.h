/*
 * Whole numbers typed by a user (command-line options): one rule for every
 * option that takes one.
 */
#ifndef ALOFT_NUMBER_H
#define ALOFT_NUMBER_H

/* A whole decimal number in [LO, HI] into *OUT: 0, or -1 (OUT unchanged)
 * for NULL, "", a leading '+' or white space, trailing text or a number out
 * of range. Only digits after an optional '-' are a number: strtol would
 * also skip white space and take a '+', and a value that needs either was
 * not typed as a plain number. */
int number_parse_int(const char *s, long lo, long hi, int *out);

#endif
