# Writes Keras 3 .keras archives into tests/data/keras/archives/, as Keras 3's
# model.save("m.keras") lays them out (keras/src/saving/saving_lib.py
# _save_model_to_fileobj): a zip (zipfile's default, entries stored) of
# metadata.json ({"keras_version", "date_saved"}), config.json (json.dumps of
# the serialized model: what to_json() holds, with its compile_config) and
# model.weights.h5. ipusim reads config.json only; the weights entry is left
# empty here (writing HDF5 needs h5py, and the tests check that nothing reads
# it). Dates are fixed so that the output is the same on every run.
#   mlp_adam.keras       optimizers_keras3.json (the Adam-compiled MLP) saved
#   no_config.keras      an archive with metadata and weights but no config.json
#   oversized.keras      config.json of 17 MiB (deflated to a few kB): over the 16 MiB limit
#   lying_size.keras     the same, its headers claiming 2 bytes: a zip bomb that says it is small
#   truncated.keras      mlp_adam.keras cut after 200 bytes
#   not_a_zip.keras      a text file named .keras
# Written without Keras:
#   python3 tests/data/keras/make_keras_archives.py tests/data/keras
import json, os, struct, sys, zipfile

here = sys.argv[1]
out = os.path.join(here, "archives")
DATE = (2024, 5, 1, 12, 0, 0)
METADATA = json.dumps({"keras_version": "3.3.3", "date_saved": "2024-05-01@12:00:00"})

def archive(path, entries, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = compression
            zf.writestr(info, data)

with open(os.path.join(here, "optimizers_keras3.json")) as f:
    model = json.load(f)
config = json.dumps(model)
archive(os.path.join(out, "mlp_adam.keras"),
        [("metadata.json", METADATA), ("config.json", config), ("model.weights.h5", b"")])
archive(os.path.join(out, "no_config.keras"), [("metadata.json", METADATA), ("model.weights.h5", b"")])

big = b" " * (17 << 20)  # 17 MiB of JSON whitespace
archive(os.path.join(out, "oversized.keras"), [("config.json", big)], zipfile.ZIP_DEFLATED)

# The same archive with every uncompressed size of config.json set to 2:
# the local header's (offset 22) and the central directory entry's (offset 24).
with open(os.path.join(out, "oversized.keras"), "rb") as f:
    data = bytearray(f.read())
local = data.find(b"PK\x03\x04")
data[local + 22:local + 26] = struct.pack("<I", 2)
central = data.find(b"PK\x01\x02")
data[central + 24:central + 28] = struct.pack("<I", 2)
with open(os.path.join(out, "lying_size.keras"), "wb") as f:
    f.write(data)

with open(os.path.join(out, "mlp_adam.keras"), "rb") as f:
    head = f.read(200)
with open(os.path.join(out, "truncated.keras"), "wb") as f:
    f.write(head)
with open(os.path.join(out, "not_a_zip.keras"), "w") as f:
    f.write("this is not a Keras model\n")
