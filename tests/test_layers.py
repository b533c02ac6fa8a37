# The layers of host/ and sandbox/ point one way: reading every
# `#include "..."` of the C sources, no folder (host/skills, host/minispec,
# host/mission, ...; the files directly in host/ count as one base layer, and
# host/main.c as the top) reaches itself again through another, and the skill
# registry is a leaf that includes no other project header. A cycle is
# printed as the chain of files that closes it.
import os
import re
import sys

src = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = (".c", ".h", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_files():
    files = {}
    for top in ("host", "sandbox"):
        for folder, _, names in os.walk(os.path.join(src, top)):
            for name in names:
                if name.endswith(SOURCES):
                    path = os.path.relpath(os.path.join(folder, name), src)
                    with open(os.path.join(src, path), errors="replace") as f:
                        files[path] = f.read()
    return files


def resolve(files, including, name):
    # The build's include path: the including file's folder, host/, the root.
    for base in (os.path.dirname(including), "host", ""):
        path = os.path.normpath(os.path.join(base, name))
        if path in files:
            return path
    return None


def layer(path):
    parts = path.split("/")
    if parts[0] == "sandbox":
        return "sandbox"
    if len(parts) == 2:
        return "host/main" if parts[1] == "main.c" else "host (base)"
    return "/".join(parts[:2])


def edges(files):
    out = {}
    for path, text in files.items():
        for name in INCLUDE.findall(text):
            target = resolve(files, path, name)
            if target and layer(target) != layer(path):
                out.setdefault(layer(path), {}).setdefault(layer(target), (path, target))
    return out


def find_cycle(graph):
    # Depth-first search; a back edge closes a cycle.
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def main():
    files = read_files()
    failed = False
    if "host/skills/registry.c" not in files:
        print("host/skills/registry.c not found under", src)
        return 1
    graph = edges(files)
    cycle = find_cycle(graph)
    if cycle:
        failed = True
        print("layer cycle:", " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print("   %s includes %s" % graph[a][b])
    for path in ("host/skills/registry.c", "host/skills/registry.h"):
        for name in INCLUDE.findall(files[path]):
            if name != "skills/registry.h":
                failed = True
                print(f"{path} includes \"{name}\": the registry must stay a leaf")
    print("layers:", len(graph), "with outgoing includes;", "FAIL" if failed else "ok")
    return 1 if failed else 0


sys.exit(main())
