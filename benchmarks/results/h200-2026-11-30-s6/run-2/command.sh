python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" > $S/env.txt
(cd .ab/r64 && python3 -c "from masks.compare import code_fingerprint; print('r64 code_sha256', code_fingerprint())" >> $S/env.txt)
A="--backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 100 python3 -m masks compare $A --out-dir $S/base > $S/base.txt 2>&1)
PYTHONPATH=$P timeout 100 python3 -m masks compare $A --out-dir $S/head > $S/head.txt 2>&1
(cd .ab/r64 && timeout 100 python3 -m masks compare $A --out-dir $S/r64 > $S/r64.txt 2>&1)
python3 benchmarks/ab_table.py $S/base/compare.json $S/head/compare.json > $S/ab-base-head.md
python3 benchmarks/ab_table.py $S/base/compare.json $S/r64/compare.json > $S/ab-base-r64.md
PYTHONPATH=$P timeout 90 ncu --clock-control none --profile-from-start off --kernel-name regex:fused --set full --import-source no -f -o /tmp/prof python3 benchmarks/profile_kernels.py --backends triton:fused,cupy:fused --num-reqs 256 --vocab 151936 --dtype bf16 --support 50 > $S/ncu.log 2>&1
timeout 60 ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > $S/source-50.csv 2> $S/source.err; gzip $S/source-50.csv
timeout 60 ncu -i /tmp/prof.ncu-rep --page details --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats > $S/details-50.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
paste -d'|' <(grep -E "\| (256|512|1024) \|" $S/ab-base-head.md | cut -d'|' -f3-8) <(grep -E "\| (256|512|1024) \|" $S/ab-base-r64.md | cut -d'|' -f8-9)
