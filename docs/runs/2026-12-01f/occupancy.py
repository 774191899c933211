import re,sys
def parse(f):
    d={};cur=None
    for l in open(f):
        m=re.search(r"Compiling entry function '(\w+)'",l)
        if m: cur=m.group(1)
        m=re.search(r"Used (\d+) registers",l)
        if m and cur: d[cur]=int(m.group(1))
    return d
def warps(r):
    r=max(r,16); alloc=-(-r//8)*8
    return min(64, 65536//(alloc*32))
a=parse(sys.argv[1]); b=parse(sys.argv[2])
for k in sorted(a):
    if k in b and warps(b[k])<warps(a[k]):
        print(f"{k:40} {a[k]}->{b[k]} regs, warps/SM {warps(a[k])}->{warps(b[k])}")
