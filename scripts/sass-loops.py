"""The loops of a kernel's SASS (cuobjdump -sass), from its back branches: each loop's address
range, its static instruction count and its instruction mix, innermost first (by size). For
reading what a kernel's step loop costs without a GPU: a loop that runs inside another runs that
many more times than it shows. Reads the SASS of one kernel from a file or standard input.

    python3 scripts/sass-loops.py KERNEL.sass
"""

import collections
import re
import sys


def instructions(text):
    """(address, instruction) pairs of cuobjdump's SASS listing."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def loops(ins):
    """(first, last) indices of each loop: a branch back to an earlier (or its own) address."""
    index = {a: i for i, (a, _) in enumerate(ins)}
    found = []
    for i, (a, t) in enumerate(ins):
        if "BRA" not in t:
            continue
        m = re.search(r"BRA(?:\.\w+)*\s+(?:\w+,\s*)?(0x[0-9a-f]+)", t)
        if m and int(m.group(1), 16) <= a and int(m.group(1), 16) in index:
            found.append((index[int(m.group(1), 16)], i))
    return found


def opcode(t):
    """The opcode without predicate and modifiers: `@!P0 LDG.E.128` -> `LDG`."""
    return re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0]


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    ins = instructions(text)
    print(f"{len(ins)} instructions")
    for first, last in sorted(loops(ins), key=lambda fl: fl[1] - fl[0]):
        mix = collections.Counter(opcode(t) for _, t in ins[first : last + 1])
        top = ", ".join(f"{k}:{v}" for k, v in mix.most_common(12))
        count = last - first + 1
        print(f"loop {ins[first][0]:#06x}-{ins[last][0]:#06x}: {count} instruction{'' if count == 1 else 's'}; {top}")


if __name__ == "__main__":
    main()
