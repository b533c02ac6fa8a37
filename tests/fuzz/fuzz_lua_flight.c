/*
 * libFuzzer harness of the safety campaign (issue 15): generated Lua skill scripts
 * flown in the simulator with every invariant of tests/campaign/flight.h
 * checked (campaign_fuzz.h says how).
 */
#include "campaign_fuzz.h"

/* libFuzzer's entry point (declared here: no header of libFuzzer has it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return campaign_fuzz_one(data, size, true, "lua");
}
