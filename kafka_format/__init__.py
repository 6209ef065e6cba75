"""Kafka's on-disk KRaft metadata files: a pure codec plus the file layout.

Byte-level codecs (no file access): record batch v2 (:mod:`.batch_format`,
:mod:`.log_codec`), metadata records (:mod:`.metadata_serde`, driven by the
schema table in :mod:`.metadata_schemas`), raft control records
(:mod:`.control_records`), snapshots (:mod:`.snapshot_codec`) and the small
text files (:mod:`.node_state`); :mod:`.record_json` writes a metadata record's
JSON as Kafka's generated converters do. :mod:`.files` reads and writes a node's
directory in Kafka's layout. :mod:`.fast_codec` and :mod:`.fast_encode`
generate the specialised functions that decode and encode the common
metadata records; the generic codec stays the reference and handles the rest.

Decoding keeps what re-encoding needs, so a Kafka file decoded and encoded
again gives identical bytes; damaged input yields the good prefix and a
:class:`DecodeFailure`, never an exception.

Entry points:

- bytes: :func:`decode_log` / :func:`encode_log` (a segment's batches),
  :func:`decode_snapshot` / :func:`encode_snapshot`, :func:`encode_batch` /
  :func:`encode_batches` (simulated :class:`raft.batch.Batch` es),
  :func:`decode_metadata_record` / :func:`encode_metadata_record`,
  :func:`record_version` (the version Kafka writes at a metadata.version);
- files: :func:`read_node_dir`, :func:`read_log_dir`, :func:`read_segment_file`,
  :func:`read_snapshot_file`, :func:`read_bootstrap_checkpoint`,
  :func:`read_bootstrap_directory`, :func:`read_quorum_state`,
  :func:`read_meta_properties`, :func:`write_node_log`, :func:`write_snapshot_file`,
  :func:`write_bootstrap_file`.
"""

from kafka_format.batch_format import (
    BatchHeader,
    DecodedBatch,
    RecordFacts,
    encode_batch,
    encode_batches,
    encode_decoded_batch,
    to_decoded_batch,
)
from kafka_format.control_records import UnknownControlRecord
from kafka_format.errors import DecodeError, DecodeFailure, EncodeError, KafkaFilesError
from kafka_format.files import (
    MetadataLogDir,
    NodeDir,
    SegmentFile,
    SnapshotFile,
    read_bootstrap_checkpoint,
    read_bootstrap_directory,
    read_log_dir,
    read_meta_properties,
    read_node_dir,
    read_quorum_state,
    read_segment_file,
    read_snapshot_file,
    segment_file_name,
    snapshot_file_name,
    write_bootstrap_file,
    write_meta_properties,
    write_node_log,
    write_quorum_state,
    write_snapshot_file,
)
from kafka_format.log_codec import LogDecodeResult, decode_log, encode_log
from kafka_format.metadata_serde import (
    DecodedRecord,
    decode_metadata_record,
    encode_metadata_record,
)
from kafka_format.node_state import MetaProperties, QuorumState
from kafka_format.record_versions import record_version
from kafka_format.snapshot_codec import (
    BOOTSTRAP_SNAPSHOT_ID,
    SnapshotDecodeResult,
    decode_snapshot,
    encode_snapshot,
    snapshot_batches,
)

__all__ = [
    "BOOTSTRAP_SNAPSHOT_ID",
    "BatchHeader",
    "DecodeError",
    "DecodeFailure",
    "DecodedBatch",
    "DecodedRecord",
    "EncodeError",
    "KafkaFilesError",
    "LogDecodeResult",
    "MetaProperties",
    "MetadataLogDir",
    "NodeDir",
    "QuorumState",
    "RecordFacts",
    "SegmentFile",
    "SnapshotDecodeResult",
    "SnapshotFile",
    "UnknownControlRecord",
    "decode_log",
    "decode_metadata_record",
    "decode_snapshot",
    "encode_batch",
    "encode_batches",
    "encode_decoded_batch",
    "encode_log",
    "encode_metadata_record",
    "encode_snapshot",
    "read_bootstrap_checkpoint",
    "read_bootstrap_directory",
    "read_log_dir",
    "read_meta_properties",
    "read_node_dir",
    "read_quorum_state",
    "read_segment_file",
    "read_snapshot_file",
    "record_version",
    "segment_file_name",
    "snapshot_batches",
    "snapshot_file_name",
    "to_decoded_batch",
    "write_bootstrap_file",
    "write_meta_properties",
    "write_node_log",
    "write_quorum_state",
    "write_snapshot_file",
]
