python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" > $S/env.txt
PYTHONPATH=$P timeout 300 python3 benchmarks/same_bytes_copy.py --out $S/same_bytes_copy.json > $S/same_bytes_copy.txt 2>&1
tar -czf $OUT/s.tgz -C $OUT s
cat $S/same_bytes_copy.txt
