#include "cmd/cli.h"

int cmd_detect(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft detect --detector yolo|hog [--model F] [--names F] [--json] "
                       "IMAGE...\n\nRun vision on images.\n");
}
