#include "cmd/cli.h"

int cmd_run(int argc, char **argv)
{
    return cli_pending(argc, argv,
                       "Usage: aloft run [--scene S] (--plan FILE|- | --task TEXT) "
                       "[options]\n\nFly one mission.\n");
}
