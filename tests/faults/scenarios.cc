#include "faults/scenarios.h"

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>

#include "io/npy.h"
#include "io/pickle.h"
#include "io/safetensors.h"
#include "support/process.h"
#include "support/reference_transpose.h"
#include "wrap/wrap_fixtures.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

struct Tensor {
  std::string name;
  std::string descr;  // numpy's
  std::string safetensors_dtype;
  size_t itemsize;
  std::vector<int64_t> shape;
};

// The tensors of a run and their specs.
struct TensorSet {
  std::vector<Tensor> tensors;
  const char* specs;
};

// ~15 MB in all: f32 and bf16 matrices, a u8 image batch, an f32 tensor without a spec. w0's
// spec is not simplified (2, 64 fold into 128), so materialize rewrites the file; x has none.
const TensorSet kLarge = {
    {
        {"w0", "<f4", "F32", 4, {512, 2048}},
        {"w1", "<V2", "BF16", 2, {1024, 2048}},
        {"b", "|u1", "U8", 1, {4, 3, 256, 256}},
        {"x", "<f4", "F32", 4, {3, 500, 1000}},
    },
    R"([{"input_name": "w0", "reshape": [512, 16, 2, 64], "transpose": [1, 0, 2, 3]}, )"
    R"({"input_name": "w1", "reshape": [1024, 2048], "transpose": [1, 0]}, )"
    R"({"input_name": "b", "reshape": [4, 3, 256, 256], "transpose": [0, 2, 3, 1]}])"};

// The same names, dtypes and kinds of spec in ~170 KB.
const TensorSet kSmall = {
    {
        {"w0", "<f4", "F32", 4, {16, 2048}},
        {"w1", "<V2", "BF16", 2, {64, 128}},
        {"b", "|u1", "U8", 1, {2, 3, 16, 16}},
        {"x", "<f4", "F32", 4, {3, 5, 10}},
    },
    R"([{"input_name": "w0", "reshape": [16, 16, 2, 64], "transpose": [1, 0, 2, 3]}, )"
    R"({"input_name": "w1", "reshape": [64, 128], "transpose": [1, 0]}, )"
    R"({"input_name": "b", "reshape": [2, 3, 16, 16], "transpose": [0, 2, 3, 1]}])"};

// A stacked tensor (experts, layers) of 25.5 MB whose spec keeps its leading dim in place: the
// pipeline reads and permutes it in two pieces of whole slices (31 and 17 of 520 KiB).
const TensorSet kStacked = {
    {{"e", "<f4", "F32", 4, {48, 256, 520}}},
    R"([{"input_name": "e", "reshape": [48, 256, 520], "transpose": [0, 2, 1]}])"};

// A set's bytes, made once per process (RandomBytes is deterministic per seed).
const std::vector<std::vector<std::byte>>& TensorBytes(const TensorSet& set) {
  static std::map<const TensorSet*, std::vector<std::vector<std::byte>>> made;
  auto [it, inserted] = made.try_emplace(&set);
  if (inserted) {
    uint64_t seed = 11;
    for (const Tensor& t : set.tensors) {
      size_t n = t.itemsize;
      for (int64_t d : t.shape) n *= static_cast<size_t>(d);
      it->second.push_back(RandomBytes(n, seed++));
    }
  }
  return it->second;
}

io::Tensor ArrayOf(size_t i, const TensorSet& set = kLarge) {
  const Tensor& t = set.tensors[i];
  io::Tensor a;
  a.name = t.name;
  a.descr = t.descr;
  a.dtype = t.safetensors_dtype;
  a.element_bits = t.itemsize * 8;
  a.shape = Dims(t.shape);
  a.stored = TensorBytes(set)[i];
  return a;
}

void Check(const Status& status, const std::string& what) {
  if (!status) throw std::runtime_error(what + ": " + status.error().ToString());
}

void SetUpWrap(const std::string& root) {
  // Serialized once: protobuf map order may differ between two serializations.
  static const std::string module = LoadTextModule("jax_module.textproto").SerializeAsString();
  WriteFile(root + "/m.pb", module);
  const std::vector<std::byte> neff = RandomBytes(16 << 20, 7);
  WriteFile(root + "/model.neff", std::string(reinterpret_cast<const char*>(neff.data()), neff.size()));
  WriteFile(root + "/io.json", ReadFile(WrapTestdata("jax_io_transposes.json")));
  fs::create_directory(root + "/out");
}

void SetUpMaterialize(const std::string& root) { SetUpWorkDir(root + "/work"); }

void SetUpApplyNpy(const std::string& root) {
  for (size_t i = 0; i < kLarge.tensors.size(); ++i) {
    Check(io::WriteNpy(root + "/" + kLarge.tensors[i].name + ".npy", ArrayOf(i)), "WriteNpy");
  }
  WriteFile(root + "/io.json", kLarge.specs);
  fs::create_directory(root + "/out");
}

void SetUpApplySafetensors(const std::string& root) {
  std::vector<io::Tensor> tensors;
  for (size_t i = 0; i < kLarge.tensors.size(); ++i) tensors.push_back(ArrayOf(i));
  io::SafetensorsMetadata metadata = {{"format", "pt"}};
  Check(io::WriteSafetensors(root + "/model.safetensors", tensors, metadata), "WriteSafetensors");
  WriteFile(root + "/io.json", kLarge.specs);
  fs::create_directory(root + "/out");
}

void SetUpApplyStacked(const std::string& root) {
  const std::vector<io::Tensor> tensors = {ArrayOf(0, kStacked)};
  io::SafetensorsMetadata metadata = {{"format", "pt"}};
  Check(io::WriteSafetensors(root + "/model.safetensors", tensors, metadata), "WriteSafetensors");
  WriteFile(root + "/io.json", kStacked.specs);
  fs::create_directory(root + "/out");
}

// One tensor per shard, as transformers' save_pretrained lays a checkpoint out.
void SetUpApplySharded(const std::string& root) {
  std::string weight_map;
  for (size_t i = 0; i < kLarge.tensors.size(); ++i) {
    const std::string shard = "model-0000" + std::to_string(i + 1) + "-of-0000" +
                              std::to_string(kLarge.tensors.size()) + ".safetensors";
    const std::vector<io::Tensor> tensors = {ArrayOf(i)};
    io::SafetensorsMetadata metadata = {{"format", "pt"}};
    Check(io::WriteSafetensors(root + "/" + shard, tensors, metadata), "WriteSafetensors");
    weight_map +=
        std::string(i ? ", " : "") + "\"" + kLarge.tensors[i].name + "\": \"" + shard + "\"";
  }
  WriteFile(root + "/model.safetensors.index.json",
            "{\"metadata\": {\"total_size\": 15000000}, \"weight_map\": {" + weight_map + "}}\n");
  WriteFile(root + "/io.json", kLarge.specs);
  fs::create_directory(root + "/out");
}

}  // namespace

void SetUpWorkDir(const std::string& work, WorkDirInputs inputs) {
  const TensorSet& set = inputs == WorkDirInputs::kSmall ? kSmall : kLarge;
  fs::create_directories(work);
  std::vector<io::Tensor> arrays;
  for (size_t i = 0; i < set.tensors.size(); ++i) {
    arrays.push_back(ArrayOf(i, set));
    arrays.back().dtype.clear();  // a pickle names dtypes by descr only
  }
  Check(io::WritePickle(work + "/inp-000.p", arrays), "WritePickle");
  WriteFile(work + "/io_transposes.json", set.specs);
  for (const char* dir : {"sg00", "sg01", "nc0/sg00"}) fs::create_directories(work + "/" + dir);
}

const std::vector<Scenario>& WritingScenarios() {
  static const std::vector<Scenario> scenarios = {
      {"wrap",
       SetUpWrap,
       {"wrap", "--hlo", "m.pb", "--neff", "model.neff", "--output", "out/wrapped.pb",
        "--io_transposes", "io.json"}},
      {"materialize", SetUpMaterialize, {"materialize", "work", "--verify", "--quiet"}},
      {"apply_npy",
       SetUpApplyNpy,
       {"apply", "--io-transposes", "io.json", "--input", "w0=w0.npy", "--input", "w1=w1.npy",
        "--input", "b=b.npy", "--input", "x=x.npy", "--out-dir", "out", "--format", "npy",
        "--quiet"}},
      {"apply_safetensors",
       SetUpApplySafetensors,
       {"apply", "--io-transposes", "io.json", "--inputs", "model.safetensors", "--out-dir", "out",
        "--quiet"}},
      {"apply_sharded",
       SetUpApplySharded,
       {"apply", "--io-transposes", "io.json", "--inputs", "model.safetensors.index.json",
        "--out-dir", "out", "--quiet"}},
      {"apply_stacked",
       SetUpApplyStacked,
       {"apply", "--io-transposes", "io.json", "--inputs", "model.safetensors", "--out-dir", "out",
        "--quiet"}},
      // The same, its cached pieces permuted from the file's mapping whatever this machine's
      // probe prefers (a truncation then faults the kernel's reads, not a pread).
      {"apply_stacked_mapped",
       SetUpApplyStacked,
       {"apply", "--io-transposes", "io.json", "--inputs", "model.safetensors", "--out-dir", "out",
        "--quiet", "--cached-reads", "map"}},
  };
  return scenarios;
}

const Scenario& FindScenario(const std::string& name) {
  for (const Scenario& s : WritingScenarios()) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no scenario " + name);
}

}  // namespace iotx::test
