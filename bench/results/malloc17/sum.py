import json,glob,sys,os
d0=sys.argv[1] if len(sys.argv)>1 else '/tmp/malloc17-ab'
rows=[]
for f in sorted(glob.glob(d0+'/*.json'), key=os.path.getmtime):
  try: j=json.load(open(f))
  except Exception: continue
  r=j['results'][0]; M=2**20
  print(f"{os.path.basename(f):14s} load {j['loadavgPerChild'][0][0]:5.2f} growth {r['rssAnonGrowthBytes']/M:6.1f} peak {r['peakRssAnonGrowthBytes']/M:6.1f} base {r['baseRssBytes']/M:6.1f} p/s 90/10 {r['skew90_10']['batchedProofsPerSec']:7.0f} uni {r['uniform']['batchedProofsPerSec']:7.0f} coldp99 {r['skew90_10']['cold']['p99Ms']:.3f}/{r['uniform']['cold']['p99Ms']:.3f} p99 {r['skew90_10']['p99Ms']:.3f}/{r['uniform']['p99Ms']:.3f} apply {r['applyUpdatesPerSec']:.0f} cpu/proof {r.get('warmCpuUsPerProof',0):.1f}us warm {r['warmProofs']} env {r.get('mallocEnv')}")
