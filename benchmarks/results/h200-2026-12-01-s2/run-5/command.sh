python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 1,4 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 100 python3 -m masks compare $A --out-dir $S/$2 > $S/$2.txt 2>&1); }
for round in 1 2; do for t in hnew hshuf; do run $t $t-$round; done; done
tar -czf $OUT/s.tgz -C $OUT s
for t in hnew-1 hshuf-1 hnew-2 hshuf-2; do echo $t; grep -A12 "summary per backend" $S/$t.txt | cut -c1-100; done
