#include "cmd/cli.h"

int cmd_bench(int argc, char **argv)
{
    return cli_pending(argc, argv, "Usage: aloft bench\n\nRun the benchmark suite.\n");
}
