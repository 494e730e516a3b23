#!/bin/sh
# Regenerate scip/scip_pb2.py and scip/scip_pb2.pyi from scip/scip.proto.
#
# Uses Debian's protoc (apt-get install -y protobuf-compiler, libprotoc 3.21.12) on purpose:
# its output has no runtime version check, so it loads under any protobuf >= 4 (checked with
# 7.36.2), while grpcio-tools' output pins the protobuf runtime to its own version.
set -eu
cd "$(dirname "$0")/.."
version="$(protoc --version)"
case "$version" in
  "libprotoc 3.21."*) ;;
  *) echo "regenerate.sh: expected libprotoc 3.21.x, found '$version'" >&2; exit 1 ;;
esac
protoc --proto_path=. --python_out=. --pyi_out=. scip/scip.proto
echo "regenerated scip/scip_pb2.py and scip/scip_pb2.pyi with $version"
