import re,sys,collections
lines=open(sys.argv[1]).read().split('\n')
ins=[]
for l in lines:
    m=re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);',l)
    if m:
        ins.append((int(m.group(1),16),m.group(2).strip()))
addr={a:i for i,(a,_) in enumerate(ins)}
loops=[]
for i,(a,t) in enumerate(ins):
    m=re.search(r'BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))',t)
    m2=re.search(r'BRA.*?\(\.L_x_(\d+)\)',t)
    tgt=None
    mm=re.search(r'0x([0-9a-f]+)\s*$',t)
    if 'BRA' in t:
        mm=re.search(r'(?:BRA|BRA\.U|BRA\.DIV)[^0-9a-fx]*?(0x[0-9a-f]+)',t)
        if mm:
            tgt=int(mm.group(1),16)
    if tgt is not None and tgt<=a and tgt in addr:
        loops.append((addr[tgt],i))
for s,e in loops:
    body=[t for _,t in ins[s:e+1]]
    ops=collections.Counter(re.sub(r'^@!?U?P\w+\s+','',t).split()[0].split('.')[0] for t in body)
    print(f"loop {ins[s][0]:#x}-{ins[e][0]:#x}: {e-s+1} instr;", ', '.join(f"{k}:{v}" for k,v in ops.most_common(25)))
