# Run 2 (session 2026-12-04): where `cluster`'s loss comes from. The same kernel from compact.cu
# patched in memory (.ab/diag.py, no gate: the patched kernels move the same bytes and may rank
# wrongly): as built, without the exchange (cluster dims kept), without cluster dims either (a
# plain launch of R x 2 blocks of 256 threads); each against `fused` in the same process, two
# rounds, R = 256.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s27run2.sh $S/command.sh; cp .ab/diag.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for patch in asis noexchange nocluster; do
  s=$SECONDS; MASKS_CU_PATCH=$patch PYTHONPATH=$P timeout 120 python3 .ab/diag.py > $S/$patch.txt 2> $S/$patch.err
  echo "$patch rc $? $((SECONDS-s)) s" >> $S/env.txt; cat $S/$patch.txt; tail -n 3 $S/$patch.err
done
tar -czf $OUT/s.tgz -C $OUT run-2; cat $S/env.txt
