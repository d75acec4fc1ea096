"""Compile-time tables of a profile (traces/SCHEMA.md): the work of each
program (program_work), the tensors with their debug info (tensors), the
program steps of each entry point in execution order (program_order), and each
tensor's first and last step (tensor_lifetimes)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramWork:
    """An Execute program's compute set: FLOPs per execution, vertices and tiles."""
    program_id: int
    flops: int
    vertices: int
    tiles: int


@dataclass(frozen=True)
class Tensor:
    """A variable: bytes over all tiles, the tiles it spans and the layer/op that made it."""
    id: int
    name: str
    category: str
    always_live: bool
    bytes: int
    tiles: int
    layer: str
    op: str


@dataclass(frozen=True)
class ProgramStep:
    """A program step of an entry point, at its position in execution order."""
    entry_point: int
    position: int
    program_id: int


@dataclass(frozen=True)
class TensorLifetime:
    entry_point: int
    tensor_id: int
    first_position: int
    last_position: int


def read_program_work(db):
    rows = db.execute("SELECT program_id, flops, vertices, tiles FROM program_work ORDER BY program_id")
    return [ProgramWork(*tuple(r)) for r in rows]


def read_tensors(db):
    rows = db.execute("SELECT id, CAST(name AS TEXT) AS name, CAST(category AS TEXT) AS category, always_live, bytes, tiles, CAST(layer AS TEXT) AS layer, CAST(op AS TEXT) AS op FROM tensors ORDER BY id")
    return [Tensor(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6], r[7]) for r in rows]


def read_program_order(db):
    rows = db.execute("SELECT entry_point, position, program_id FROM program_order ORDER BY entry_point, position")
    return [ProgramStep(*tuple(r)) for r in rows]


def read_tensor_lifetimes(db):
    rows = db.execute("SELECT entry_point, tensor_id, first_position, last_position FROM tensor_lifetimes "
                      "ORDER BY entry_point, tensor_id")
    return [TensorLifetime(*tuple(r)) for r in rows]
