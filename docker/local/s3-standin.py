"""moto's S3 server on 0.0.0.0:5000 with the bucket S3_BUCKET made at start (Builder does not create buckets).

The make swarm-test stand-in for an S3-compatible store (docker/local/s3-standin.Dockerfile): any credentials are
accepted, and objects live in this process's memory.
"""

import os
import signal
import sys

import boto3
from moto.server import ThreadedMotoServer

bucket = os.environ.get("S3_BUCKET", "builder")
server = ThreadedMotoServer(ip_address="0.0.0.0", port=5000, verbose=False)
server.start()
boto3.client(
    "s3",
    endpoint_url="http://127.0.0.1:5000",
    region_name="us-east-1",
    aws_access_key_id="standin",
    aws_secret_access_key="standin",
).create_bucket(Bucket=bucket)
print(f"s3-standin: moto S3 on :5000 with bucket {bucket} (in memory: not for real data)", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
signal.pause()
