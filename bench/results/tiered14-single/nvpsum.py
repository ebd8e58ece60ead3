import re,sys
log,err=sys.argv[1],sys.argv[2]
ph=[int(re.search(r'(\d+) ms',l).group(1)) for l in open(err) if l.startswith('phase')]
for (lo,hi),name in zip([(ph[0],ph[1]),(ph[2],ph[3])],['skew singles','uniform singles']):
  s=[];m=[]
  for l in open(log):
    t=re.search(r'\s(\d+) ms: ',l)
    if not t: continue
    t=int(t.group(1))
    if not (lo<=t<=hi): continue
    d=dict(kv.split('=',1) for kv in l.split(' ms: ',1)[1].split() if '=' in kv)
    if d.get('gc')=='s': s.append(d)
    elif d.get('gc') in ('ms','mc','mmc'): m.append(d)
  prom=sum(int(d['promoted']) for d in s)
  alloc=sum(int(d['allocated']) for d in s)
  print('%-16s %.1f s: scavenges %d (%.0f ms), allocated %.0f MB, promoted %.0f MB; mark-compacts %d (%.0f ms pause, %.0f ms incremental)'%(name,(hi-lo)/1000,len(s),sum(float(d['pause']) for d in s),alloc/1e6,prom/1e6,len(m),sum(float(d['pause']) for d in m),sum(float(d.get('incremental',0)) for d in m)))
