#include "cmd/cli.h"

int cmd_log(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft log [--db F] [--json] [ID]\n\nShow mission history.\n");
}
