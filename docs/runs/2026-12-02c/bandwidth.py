"""Issue 10's bandwidth table from a call's ncu CSVs (ncu-MODEL-GRAPH.csv, in DIR or DIR/ncu)
and its timed runs (DIR/timed.txt): python3 bandwidth.py DIR > bandwidth-COMMIT.md."""
import csv, re, glob, os, sys
d=sys.argv[1]
timed={}
cur=None
for line in open(f'{d}/timed.txt'):
    m=re.match(r'== (\S+) (\S+) 4x64',line)
    if m: cur=(m[1],m[2]); timed[cur]={}; continue
    m=re.match(r'bytes: forward ([\d.]+) GB compulsory / ([\d.]+) GB gather-worst',line)
    if m and cur: timed[cur]['comp']=float(m[1]); timed[cur]['gw']=float(m[2])
    m=re.match(r'device copy bandwidth \(same run\): ([\d.]+) TB/s',line)
    if m and cur: timed[cur]['copy']=float(m[1])
    m=re.match(r'auto\s+([\d.]+)\s',line)
    if m and cur: timed[cur]['ms']=float(m[1]); timed[cur]['plan']=line.split('  ')[-1].strip()
rows=[]
print("| model | graph | fwd ms | copy TB/s | comp GB | gw GB | L2 hit % (ncu, main kernel) | gw×miss GB | bound ms | binds | time / bound | ncu DRAM GB | DRAM-bytes bound ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (model,g),t in timed.items():
    f=f'{d}/ncu-{model}-{g}.csv'
    if not os.path.exists(f): f=f'{d}/ncu/ncu-{model}-{g}.csv'
    if not os.path.exists(f) or 'ms' not in t: continue
    ks={}
    with open(f) as fh:
        lines=[l for l in fh if l.startswith('"')]
    for r in csv.DictReader(lines):
        k=(r['ID'],r['Kernel Name'])
        ks.setdefault(k,{})[r['Metric Name']]=float(r['Metric Value'].replace(',',''))
    fwd={k:v for k,v in ks.items() if not k[1].startswith('fill_')}
    main=max(fwd.items(), key=lambda kv: kv[1]['gpu__time_duration.sum'])
    runs=sum(1 for k in fwd if k[1]==main[0][1])
    dram=sum(v['dram__bytes_read.sum']+v['dram__bytes_write.sum'] for v in fwd.values())/1e9/runs
    hit=main[1]['lts__t_sector_hit_rate.pct']
    gwm=t['gw']*(1-hit/100)
    bound_b=max(t['comp'],gwm)
    bound_ms=bound_b/t['copy']  # GB / (TB/s) = ms
    binds='compulsory' if t['comp']>=gwm else 'gather at L2 miss rate'
    print(f"| {model} | {g} | {t['ms']:.3f} | {t['copy']:.2f} | {t['comp']:.2f} | {t['gw']:.2f} | {hit:.1f} ({main[0][1]}) | {gwm:.2f} | {bound_ms:.3f} | {binds} | {t['ms']/bound_ms:.2f} | {dram:.2f} | {dram/t['copy']:.3f} |")
