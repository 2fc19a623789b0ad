# Device run 2 (session 2026-12-01-s5): Triton `fused` candidates against HEAD, interleaved twice,
# each run from inside its tree (.ab/t*, copies of masks/ differing only in
# masks/backends/triton.py): tbase = HEAD 73be6ff; tpm = 16-bit logits read two per int32 (SWAR),
# the one-block-ahead load kept (bf16: 104 registers), and the range rank loop bounded by the
# row's fullest word; tpm72 = tpm compiled with maxnreg=72 for the paired kernels; tpm16 = tpm with
# 16 KB blocks for 16-bit logits. Then the GPU tests of the Triton backend on the working tree
# (masks/ = tpm).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/s5run2.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
G="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 120 python3 -m masks compare --backends triton:fused $G --dtypes $3 --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do
  run tbase tbase-$round fp32,bf16; run tpm tpm-$round fp32,bf16; run tpm72 tpm72-$round bf16; run tpm16 tpm16-$round bf16
done
for round in 1 2; do for t in tpm tpm72 tpm16; do python3 benchmarks/ab_table.py $S/tbase-$round/compare.json $S/$t-$round/compare.json > $S/ab-$t-$round.md; done; done
PYTHONPATH=/tmp/site:$R python3 -c "from masks.compare import code_fingerprint; print('tests code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=/tmp/site:$R timeout 240 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py -k triton --junitxml $S/junit.xml > $S/pytest.log 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/times.txt; tail -n 3 $S/pytest.log; for t in tpm tpm72 tpm16; do tail -n 3 $S/ab-$t-1.md; tail -n 3 $S/ab-$t-2.md; done
