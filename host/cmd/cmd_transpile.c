#include "cmd/cli.h"

int cmd_transpile(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft transpile [--skills DIR] FILE|-\n\nPrint the Lua a MiniSpec "
                       "plan compiles to.\n");
}
