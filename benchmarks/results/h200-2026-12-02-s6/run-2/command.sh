# Run 2 (session 2026-12-02-s6): CuPy's new `persistent` variant (compact.cu `compact_persistent`:
# resident warps take one-group tiles from an atomic ticket, issue the next tile's loads, then
# look back over the row's tile flags and rank from the bits staged in shared memory). First the
# CuPy tests and the conformance suite's CuPy cases natively; then `persistent` against `fused`
# (and `split` below a wave) at R = 64..1024, every V, fp32 and bf16, every support.
# Run 1's kernel took every tile from one atomic counter (~3 ns a ticket); this one from 32
# queues of whole rows, a warp moving to the next queue when its own is empty.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s16run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 230 python3 -m pytest -q -p no:cacheprovider -k "cupy and (persistent or not conformance)" tests/test_cupy_backend.py tests/test_conformance.py tests/test_gpu_reliability.py > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt; tail -n 15 $S/pytest.log
s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 220 python3 -m masks compare --backends cupy:split,cupy:fused,cupy:persistent --num-reqs 64,128,256,512,1024 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 200 --no-progress --out-dir $S/ab > $S/ab.txt 2>&1); echo "ab rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; grep -v "^ *$" $S/ab.txt | tail -n 60
