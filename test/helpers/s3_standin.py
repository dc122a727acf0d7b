"""A stand-in for an S3-compatible store in the tests: moto's server mode on a free loopback port.

No S3 service is reachable from the test machines, so the storage suite runs Builder's real S3 adapter (the AWS SDK
for JavaScript v3) against moto, which speaks the S3 REST protocol: path-style requests, SigV4, multipart uploads,
ListObjectsV2, DeleteObjects. It stands in for MinIO, Ceph RGW, StorageGRID or Amazon S3; it is not one of them.

Prints {"port": N} once listening, then serves until its standard input closes (the test process ended).
"""

import json
import logging
import sys

from moto.server import ThreadedMotoServer

# One line per request on stderr would bury the test output.
logging.getLogger("werkzeug").setLevel(logging.ERROR)

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(json.dumps({"port": server.get_host_and_port()[1]}), flush=True)
sys.stdin.read()
server.stop()
