#include "cmd/cli.h"

int cmd_check(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft check [--json] [--verify N --scene S] [--skills DIR] "
                       "FILE|-\n\nParse and validate a MiniSpec plan.\n");
}
