"""Self instructions per function of one thread's callgrind dump, JIT code named through the JVM's perf map.

usage: python3 benchmarks/scripts/callgrind-self.py callgrind.out.PID.N-TID [/tmp/perf-PID.map] [ROWS]
The map is what -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit writes (benchmarks/JOURNAL.md
section 13.6); a compiled method's row holds what C2 inlined into it.
"""
import sys, re, collections
f = sys.argv[1]
pmap = []
if len(sys.argv) > 2 and sys.argv[2]:
    for line in open(sys.argv[2]):
        a, s, name = line.rstrip('\n').split(' ', 2)
        pmap.append((int(a, 16), int(s, 16), name))
    pmap.sort()
import bisect
starts = [p[0] for p in pmap]
def jname(addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < pmap[i][0] + pmap[i][1]:
        return pmap[i][2]
    return None
names = {}
self_ = collections.Counter()
cur = None; skip = False
for line in open(f):
    if line.startswith('fn='):
        m = re.match(r'fn=\((\d+)\)(?: (.*))?', line.strip())
        if m.group(2): names[m.group(1)] = m.group(2)
        cur = names.get(m.group(1)); skip = False; continue
    if line.startswith(('cfn=', 'cfi=', 'cfl=', 'cob=')):
        m = re.match(r'c(?:fn|fi|fl|ob)=\((\d+)\)(?: (.*))?', line.strip())
        if line.startswith('cfn=') and m and m.group(2): names[m.group(1)] = m.group(2)
        continue
    if line.startswith('calls='):
        skip = True; continue
    if line and (line[0].isdigit() or line[0] in '+-*'):
        parts = line.split()
        if skip: skip = False; continue
        if len(parts) >= 2 and cur is not None:
            self_[cur] += int(parts[1])
tot = sum(self_.values())
agg = collections.Counter()
for k, v in self_.items():
    name = k
    m = re.match(r"0x([0-9a-f]+)", k)
    if m and pmap:
        j = jname(int(m.group(1), 16))
        if j: name = j
    agg[re.sub(r"'\d+$", '', name)] += v
print('total', tot)
for k, v in agg.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 40):
    print(f'{v:>12} {100*v/tot:5.1f}% {k[:150]}')
