#!/bin/sh
# Speed-aware tail (issue 23, target 2): the grid of bench/results/simulate-out/speed-tail.txt.
# usage: bench/speed-tail.sh R3Q-SIM [scale|lan|all] > out.txt
#        bench/speed-tail.sh --compare before.txt after.txt
# One simulation at a time, niced; prints the command and the lines that matter.
# --compare prints the table of bench/results/simulate-out/speed-tail.txt from two such outputs.
if [ "$1" = --compare ]; then
	exec python3 - "$2" "$3" <<'PY'
import re,sys
def parse(fn):
    runs=[];cur=None
    for l in open(fn):
        if l.startswith('=='):
            cur={'cmd':l[3:].strip()};runs.append(cur)
        elif l.startswith('efficiency:'):
            cur['eff']=float(l.split()[1])
        elif l.startswith('replicas '):
            cur['rep']=int(l.split()[1].rstrip(','))
        elif l.startswith('summary:'):
            m=re.search(r'evaluations, ([0-9.]+) s',l);cur['T']=float(m.group(1))
        elif l.startswith('simulator:'):
            m=re.search(r'([0-9]+) tasks/s',l);cur['tps']=int(m.group(1))
        elif l.startswith('core:'):
            m=re.search(r'inside: ([0-9.]+) calls, ([0-9.]+) actions, [0-9.]+ us per task \(~([0-9.]+) us CPU',l)
            cur['calls'],cur['acts'],cur['us']=map(float,m.groups())
        elif l.startswith('bound:'):
            cur['max']=float(re.search(r'at most ([0-9.]+)',l).group(1))
    return runs
b=parse(sys.argv[1]);a=parse(sys.argv[2])
def key(c):
    g=lambda o:(re.search(o+r' (\S+)',c) or [None,'-'])[1]
    if '--platform' in c: return ('lan',g('--work-ms'),g('--queue-factor'))
    return (g('--workers'),g('--latency'),'auto')
from collections import OrderedDict
grp=OrderedDict()
for x,y in zip(b,a):
    assert x['cmd']==y['cmd']
    grp.setdefault(key(x['cmd']),[]).append((x,y))
print("%-22s %-23s %-23s %-19s %-25s %-25s"%("config (seeds 1-3)","efficiency main->tail","replicas main->tail","bound (max eff)","core calls/acts/us main","core calls/acts/us tail"))
for k,v in grp.items():
    f=lambda r,n:sum(z[n] for z in r)/len(r)
    bb=[x for x,_ in v];aa=[y for _,y in v]
    print("%-22s %5.1f -> %5.1f %%        %8d -> %8d   %5s %%          %5.2f/%4.2f/%5.2f        %5.2f/%4.2f/%5.2f"%(
        ' '.join(k), f(bb,'eff'),f(aa,'eff'), f(bb,'rep'),f(aa,'rep'), ("%.1f"%f(bb,'max')) if 'max' in bb[0] else '-',
        f(bb,'calls'),f(bb,'acts'),f(bb,'us'),f(aa,'calls'),f(aa,'acts'),f(aa,'us')))
    for x,y in v:
        print("    seed %s: %.1f -> %.1f %%, replicas %d -> %d, sim %d -> %d tasks/s"%(re.search(r'--seed (\d+)',x['cmd']).group(1),x['eff'],y['eff'],x['rep'],y['rep'],x['tps'],y['tps']))
PY
fi
sim=${1:?usage: $0 r3q-sim [scale|lan|all]}
what=${2:-all}
run() {
	echo "== r3q-sim $*"
	nice "$sim" "$@" --quiet --stats 2>&1 | grep -E '^(summary:|time:|replicas |efficiency:|bound:|simulator:|core:)'
}
if [ "$what" = scale ] || [ "$what" = all ]; then
	for n in 100 1000 10000; do
		for lat in 10 100; do
			for seed in 1 2 3; do
				run --network analytic --workers $n \
				    --speeds lognormal:1:0.5 --latency $lat \
				    --work-ms 1000 --mu $n --lambda $((9 * n)) \
				    --reevaluate-parents --generations 2 \
				    --seed $seed --policy r3q --queue-factor auto
			done
		done
	done
fi
if [ "$what" = lan ] || [ "$what" = all ]; then
	for ms in 100 500 1000; do
		for qf in auto 2; do
			for seed in 1 2 3; do
				run --platform lan --work-ms $ms --generations 20 \
				    --seed $seed --policy r3q --queue-factor $qf
			done
		done
	done
fi
