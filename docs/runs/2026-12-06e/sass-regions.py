# Sums ncu's source page (`ncu -i REPORT --page source --csv --print-source sass`, CSV or .csv.gz)
# over the regions between barriers (BAR.SYNC): warp-stall samples, instructions executed and the
# main stall reasons and opcodes of each region holding at least 1 % of the samples.
#   python3 sass-regions.py call2/sass-gt_tiles_fwd_w4.csv.gz
import csv, gzip, sys, collections
opener = gzip.open if sys.argv[1].endswith('.gz') else open
rows = list(csv.reader(opener(sys.argv[1], 'rt')))
hdr = rows[1]; data = rows[2:]
ix = {h:i for i,h in enumerate(hdr)}
stalls = [h for h in hdr if h.startswith('stall_') and '(Not' not in h]
tot = sum(int(r[ix['Warp Stall Sampling (All Samples)']] or 0) for r in data)
print('total samples', tot, 'instructions', len(data))
# regions split at BAR.SYNC
reg = 0; regs = collections.OrderedDict()
for n, r in enumerate(data):
    src = r[ix['Source']].strip()
    s = int(r[ix['Warp Stall Sampling (All Samples)']] or 0)
    ex = int(r[ix['Instructions Executed']] or 0)
    d = regs.setdefault(reg, {'first': n, 'samples': 0, 'exec': 0, 'st': collections.Counter(), 'ops': collections.Counter()})
    d['samples'] += s; d['exec'] += ex; d['last'] = n
    for h in stalls: d['st'][h] += int(r[ix[h]] or 0)
    d['ops'][src.split()[0] if not src.startswith('@') else src.split()[1]] += ex
    if 'BAR.SYNC' in src or 'BAR.SYNC.DEFER' in src: reg += 1
for k, d in regs.items():
    if d['samples'] < tot * 0.01: continue
    top = ', '.join(f"{h[6:]}={v}" for h, v in d['st'].most_common(5))
    ops = ', '.join(f"{o}={v//1000}k" for o, v in d['ops'].most_common(6))
    print(f"region {k} lines {d['first']}-{d['last']}: samples {d['samples']} ({100*d['samples']/tot:.1f}%), exec {d['exec']/1e6:.1f}M | {top}\n    ops {ops}")
