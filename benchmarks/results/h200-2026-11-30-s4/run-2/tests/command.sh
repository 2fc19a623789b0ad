python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit
O=$OUT/t; mkdir -p $O
MASKS_RELIABILITY_LOG=$O/reliability.jsonl timeout 520 python3 -m pytest tests -q -rs -p no:cacheprovider --durations=15 --junitxml $O/junit.xml > $O/pytest.log 2>&1
tail -n 45 $O/pytest.log
