#include "cmd/cli.h"

int cmd_serve(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft serve [--port P] [--drone ...]\n\nServe the web UI.\n");
}
