#!/usr/bin/env python3
"""Folds `perf script` output into stacks and draws them as a flame graph (SVG).

  tools/flamegraph.py fold < perf-script.txt > stacks.folded
  tools/flamegraph.py svg --title TITLE [--min-percent P] < stacks.folded > graph.svg
  tools/flamegraph.py top [--count N] < stacks.folded > top.txt

fold: one line per distinct stack, "process;outermost;...;innermost COUNT", samples summed;
offsets (+0x..) and addresses dropped, so the same function folds together. Swift names are
expected demangled already (pipe perf script through `swift demangle --simplified`).
svg: the root at the bottom, each frame as wide as its share of the samples; frames narrower
than --min-percent of the whole are left out (they would be unreadable and swell the file),
and the title says how many samples that left out. Hover a frame for its name, samples and
share. top: the functions with the most samples of their own (innermost frame), and the most
samples in all (anywhere on the stack), as a short text table. Debian 12 packages no flame graph tool, so this is the project's own.
"""
import argparse
import collections
import hashlib
import html
import re
import sys

OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def fold(lines, by_thread=False):
    """perf script's sample blocks (a header line, frames innermost first, a blank line);
    by_thread roots each stack at "command/thread id" instead of the command."""
    stacks = collections.Counter()
    process, frames = None, []

    def flush():
        if process is not None:
            names = [process] + [f.replace(";", ":") for f in reversed(frames)]
            stacks[";".join(names)] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            process, frames = None, []
        elif not line[0].isspace():
            flush()
            # "comm pid [cpu] time: period event:": the command may hold spaces.
            match = re.match(r"(.*?)\s+(\d+)(?:/(\d+))?\s", line)
            process = (match.group(1).strip() if match else line.split()[0]) or "?"
            if by_thread and match:
                process += "/" + (match.group(3) or match.group(2))
            frames = []
        elif process is not None:
            parts = line.strip().split(" ", 1)
            if len(parts) < 2:
                continue
            symbol_and_module = parts[1]
            module = ""
            if symbol_and_module.endswith(")") and " (" in symbol_and_module:
                symbol_and_module, module = symbol_and_module.rsplit(" (", 1)
                module = module[:-1].rsplit("/", 1)[-1]
            symbol = OFFSET.sub("", symbol_and_module.strip())
            if symbol in ("[unknown]", ""):
                symbol = module if module.startswith("[") else f"[{module or 'unknown'}]"
            if module.startswith("kernel") or module == "[kernel.kallsyms]":
                symbol += " [k]"
            frames.append(symbol)
    flush()
    return stacks


class Node:
    __slots__ = ("name", "count", "children")

    def __init__(self, name):
        self.name, self.count, self.children = name, 0, {}


def tree(folded):
    root = Node("all")
    for line in folded:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        count = int(count)
        root.count += count
        node = root
        for name in stack.split(";"):
            node = node.children.setdefault(name, Node(name))
            node.count += count
    return root


def colour(name):
    """Warm colours, stable per name; the kernel's frames in blue-grey, to tell them apart."""
    digest = hashlib.md5(name.encode()).digest()
    if name.endswith(" [k]"):
        return f"rgb({90 + digest[0] % 40},{120 + digest[1] % 40},{170 + digest[2] % 50})"
    return f"rgb({205 + digest[0] % 50},{80 + digest[1] % 130},{30 + digest[2] % 50})"


def svg(root, title, min_percent, width=1200, row=16):
    frames, depth, hidden = [], 0, 0
    minimum = root.count * min_percent / 100

    def walk(node, x, level):
        nonlocal depth, hidden
        frames.append((node, x, level))
        depth = max(depth, level)
        offset = x
        for child in sorted(node.children.values(), key=lambda n: n.name):
            if child.count < minimum:
                hidden += child.count
            else:
                walk(child, offset, level + 1)
            offset += child.count

    walk(root, 0, 0)
    top, bottom = 40, 10
    height = top + (depth + 1) * row + bottom
    scale = (width - 20) / max(root.count, 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fdfdf6"/>',
           f'<text x="10" y="18" font-size="14">{html.escape(title)}</text>',
           f'<text x="10" y="34" fill="#555">{root.count:,} samples; frames under '
           f'{min_percent:g}% of them left out ({hidden:,} samples in all)</text>']
    for node, x, level in frames:
        w = node.count * scale
        px = 10 + x * scale
        py = height - bottom - (level + 1) * row
        share = 100 * node.count / max(root.count, 1)
        label = html.escape(node.name)
        out.append(f'<g><title>{label} ({node.count:,} samples, {share:.1f}%)</title>'
                   f'<rect x="{px:.1f}" y="{py}" width="{max(w - 0.5, 0.5):.1f}" '
                   f'height="{row - 1}" fill="{colour(node.name)}"/>')
        chars = int((w - 4) / 6.6)
        if chars >= 3:
            text = node.name if len(node.name) <= chars else node.name[:chars - 2] + ".."
            out.append(f'<text x="{px + 2:.1f}" y="{py + row - 4}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def top(folded, count):
    own, inclusive, total = collections.Counter(), collections.Counter(), 0
    for line in folded:
        stack, _, samples = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        samples = int(samples)
        total += samples
        names = stack.split(";")
        own[names[-1]] += samples
        for name in set(names[1:]):
            inclusive[name] += samples
    lines = [f"{total:,} samples", "", "self %  function (innermost frame)"]
    lines += [f"{100 * n / total:6.1f}  {name}" for name, n in own.most_common(count)]
    lines += ["", "total %  function (anywhere on the stack)"]
    lines += [f"{100 * n / total:7.1f}  {name}" for name, n in inclusive.most_common(count)]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    folding = sub.add_parser("fold", help="perf script output (stdin) to folded stacks (stdout)")
    folding.add_argument("--by-thread", action="store_true",
                         help="root each stack at command/thread id (perf script -F +tid)")
    draw = sub.add_parser("svg", help="folded stacks (stdin) to an SVG flame graph (stdout)")
    draw.add_argument("--title", default="flame graph")
    draw.add_argument("--min-percent", type=float, default=0.5)
    summary = sub.add_parser("top", help="folded stacks (stdin) to the heaviest functions")
    summary.add_argument("--count", type=int, default=25)
    arguments = parser.parse_args()
    if arguments.command == "top":
        sys.stdout.write(top(sys.stdin, arguments.count))
    elif arguments.command == "fold":
        for stack, count in sorted(fold(sys.stdin, arguments.by_thread).items()):
            print(f"{stack} {count}")
    else:
        root = tree(sys.stdin)
        if root.count == 0:
            sys.exit("flamegraph.py svg: no samples on stdin")
        sys.stdout.write(svg(root, arguments.title, arguments.min_percent))


if __name__ == "__main__":
    main()
