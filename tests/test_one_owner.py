# One owner per rule: the rules below are written once in host/ and sandbox/,
# and every other place calls their owner. A second copy is how rules drift
# apart (a heading of 360 in one report and 0 in another; a clock that
# cannot be compared with the store's). Each finding names the file and line.
import os
import re
import sys

src = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RULES = [
    # (what, pattern, the owner, other files allowed with the reason)
    ("the monotonic clock", re.compile(r"clock_gettime\s*\(\s*CLOCK_MONOTONIC"),
     "host/clock.c", {
         # a condition variable's absolute deadline is a timespec on its clock
         "host/web/web_events.c": 1,
         # not yet moved to host/clock.h
         "host/llm/llm.c": 1,
         "host/web/web_server.c": 1,
     }),
    ("wrapping a heading", re.compile(r"fmod\s*\([^;]*\b360"), "host/drone/heading.c", {}),
    ("parsing options", re.compile(r"\bgetopt(_long)?\s*\("), "host/cmd/cli.c", {
        # not yet moved to cli_parse_options (its --tello-* options need the
        # long option's name)
        "host/cmd/cmd_run.c": 1,
    }),
    ("reading $ALOFT_MODEL", re.compile(r'(getenv|copy_env)\s*\([^;]*"ALOFT_MODEL"'),
     "host/llm/llm.c", {}),
]


def sources():
    for top in ("host", "sandbox"):
        for folder, _, names in os.walk(os.path.join(src, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h", ".cpp", ".hpp")):
                    yield os.path.relpath(os.path.join(folder, name), src)


def main():
    failed = False
    for what, pattern, owner, allowed in RULES:
        seen = {}
        for path in sources():
            with open(os.path.join(src, path), errors="replace") as f:
                for no, line in enumerate(f, 1):
                    if pattern.search(line):
                        seen.setdefault(path, []).append(no)
        if owner not in seen:
            failed = True
            print(f"{what}: its owner {owner} no longer has it")
        for path, lines in sorted(seen.items()):
            if path == owner or len(lines) <= allowed.get(path, 0):
                continue
            failed = True
            where = ", ".join(f"{path}:{n}" for n in lines)
            print(f"{what}: written again at {where}; call {owner}'s function instead")
    print("FAIL" if failed else "ok")
    return 1 if failed else 0


sys.exit(main())
