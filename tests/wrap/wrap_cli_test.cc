// `iotx wrap` and `iotx inspect` end to end: modules written from the text fixtures, the
// output read back by protoc's schema-less decoder (XLA's field numbers, FACTS.md section 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "wrap/wrap_fixtures.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

const std::string kNeff = std::string("NEFF\x01\x00\x02\xff binary", 15);

// A work dir holding m.pb (from a fixture), model.neff and optionally io_transposes.json.
struct WorkDir {
  TempDir dir;
  explicit WorkDir(const std::string& fixture) : WorkDir(LoadTextModule(fixture)) {}
  explicit WorkDir(const xla::HloModuleProto& module) {
    WriteFile(dir / "m.pb", module.SerializeAsString());
    WriteFile(dir / "model.neff", kNeff);
  }
  std::string operator/(const std::string& name) const { return dir / name; }
  bool Has(const std::string& name) const { return fs::exists(dir / name); }
};

ProcessResult Wrap(const WorkDir& work, std::vector<std::string> extra) {
  std::vector<std::string> args = {"wrap",       "--hlo",    "m.pb",  "--neff",
                                   "model.neff", "--output", "out.pb"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunTool(args, work.dir.path());
}

// The frontend attributes of a raw instruction: field 68, map entries {1: key, 2: value}.
std::map<std::string, std::string> RawAttributes(const RawField& instruction) {
  std::map<std::string, std::string> out;
  for (const RawField* entry : instruction.One(68).All(1)) {
    out[entry->One(1).value] = entry->One(2).value;
  }
  return out;
}

// The frontend attributes of the AwsNeuronNeff call (the entry's last instruction) in out.pb.
std::map<std::string, std::string> WrappedCallAttributes(const WorkDir& work) {
  RawField raw = DecodeRaw(ReadFile(work / "out.pb"));
  return RawAttributes(*raw.One(3).All(2).back());
}

TEST(WrapCliTest, JaxModuleReadBackByFieldNumber) {
  WorkDir work("jax_module.textproto");
  fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io_transposes.json");
  ProcessResult r = Wrap(work, {"--io_transposes", "io_transposes.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote out.pb"), std::string::npos) << r.out;

  RawField raw = DecodeRaw(ReadFile(work / "out.pb"));
  EXPECT_EQ(raw.One(1).value, "jit_layer");
  EXPECT_TRUE(raw.All(7).empty());   // schedule cleared
  ASSERT_EQ(raw.All(3).size(), 2u);  // computations
  const RawField& entry = *raw.All(3)[1];
  EXPECT_EQ(entry.One(6).Int(), 10);  // root_id
  auto instructions = entry.All(2);
  ASSERT_EQ(instructions.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(instructions[i]->One(2).value, "parameter");
  const RawField& call = *instructions[3];
  EXPECT_EQ(call.One(1).value, "add.10");
  EXPECT_EQ(call.One(2).value, "custom-call");
  EXPECT_EQ(call.One(28).value, "AwsNeuronNeff");  // custom_call_target
  EXPECT_EQ(call.One(35).Int(), 10);               // id
  EXPECT_EQ(call.One(36).value, "\x05\x06\x07");   // operand_ids, packed varints
  EXPECT_EQ(call.One(43).value, kNeff);            // backend_config
  EXPECT_EQ(call.One(3).One(2).Int(), 11);         // shape: f32
  std::map<std::string, std::string> attributes = RawAttributes(call);
  EXPECT_EQ(attributes.size(), 3u);
  EXPECT_EQ(attributes["valid_inputs"], "1,1,1");
  EXPECT_EQ(attributes["required_transpose"], "3,2048,2,128|0,3,2,1;256,768|1,0;");
  EXPECT_EQ(attributes["neff_input_names"], "Arg_0.5,Arg_1.6,Arg_2.7");
}

TEST(WrapCliTest, AcceptsTheDashedSpellingAndNotesUnknownNames) {
  WorkDir work("torch_tuple_module.textproto");
  fs::copy_file(WrapTestdata("torch_io_transposes.json"), work / "t.json");
  ProcessResult r = Wrap(work, {"--io-transposes", "t.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("IOTX_E117"), std::string::npos) << r.err;  // "p0.1" is no frontend name
  RawField raw = DecodeRaw(ReadFile(work / "out.pb"));
  const RawField& call = *raw.One(3).All(2).back();
  EXPECT_EQ(call.One(3).One(2).Int(), 13);  // tuple-shaped result
  EXPECT_EQ(call.One(3).All(4).size(), 2u);
  EXPECT_EQ(RawAttributes(call)["required_transpose"], ";4,4|1,0;2,12|1,0");
}

TEST(WrapCliTest, ZeroSizedParameterWithoutTransposes) {
  WorkDir work("zero_sized_module.textproto");
  WriteFile(work / "io.json", "[]");
  ProcessResult r = Wrap(work, {"--io_transposes", "io.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WrappedCallAttributes(work)["valid_inputs"], "1,0,1");
}

// The quickstart wraps examples/module.textproto; its parameters must keep matching the
// example work dir's specs (here the compiler's unsimplified ones, emitted as given).
TEST(WrapCliTest, TheExampleModelWrapsWithTheExampleWorkDirsSpecs) {
  const std::string examples = std::string(IOTX_SOURCE_DIR) + "/examples";
  WorkDir work(LoadTextModuleFile(examples + "/module.textproto"));
  ProcessResult r = Wrap(work, {"--io_transposes", examples + "/workdir/io_transposes.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto attributes = WrappedCallAttributes(work);
  EXPECT_EQ(attributes["valid_inputs"], "1,1,1");
  EXPECT_EQ(attributes["required_transpose"], "3,16,128,2,2,64|0,4,5,3,1,2;768,768|1,0;");
  EXPECT_EQ(attributes["neff_input_names"], "p0,weight_7,input_ids");
}

TEST(WrapCliTest, NothingToDoWritesNothing) {
  WorkDir work("jax_module.textproto");
  WriteFile(work / "io.json", "[]");
  ProcessResult r = Wrap(work, {"--io_transposes", "io.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "There are no io transposes nor zero-sized parameters. Output will not be produced.\n");
  EXPECT_FALSE(work.Has("out.pb"));
}

// The two-partition modular case: sg00 and sg01 each declare one transpose, combined through
// the netlist found under its default name.
struct ModularWork : WorkDir {
  ModularWork() : WorkDir("modular/module.textproto") {
    fs::copy(WrapTestdata("modular"), dir.path(), fs::copy_options::recursive);
  }
};
const std::vector<std::string> kModular = {"--modular-io-transposes",
                                           "sg00/io_transposes.json sg01/io_transposes.json"};

TEST(WrapCliTest, ModularPartitionsCombine) {
  ModularWork work;
  ProcessResult r = Wrap(work, kModular);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto attributes = WrappedCallAttributes(work);
  EXPECT_EQ(attributes["valid_inputs"], "1,1,1");
  EXPECT_EQ(attributes["required_transpose"], ";1024,4,128|1,0,2;4,128|1,0");
  EXPECT_EQ(attributes["neff_input_names"], "input_ids.1,weight.2,bias.3");
  // Each partition file is logged as the original wrapper does, in the order given.
  const size_t first = r.out.find("Processing io transpose file: sg00/io_transposes.json\n");
  const size_t second = r.out.find("Processing io transpose file: sg01/io_transposes.json\n");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second) << r.out;

  // The files may also come as separate arguments.
  fs::remove(work / "out.pb");
  r = Wrap(work, {"--netlist", "hlo_netlist.json", "--modular-io-transposes",
                  "sg00/io_transposes.json", "sg01/io_transposes.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(work.Has("out.pb"));
}

void ExpectFailure(const ProcessResult& r, const WorkDir& work, const std::string& code) {
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(code), std::string::npos) << r.err;
  EXPECT_FALSE(work.Has("out.pb"));
}

TEST(WrapCliTest, ModularErrorsComeFromTheSchemaLayer) {
  {
    ModularWork work;
    fs::remove(work / "hlo_netlist.json");
    ExpectFailure(Wrap(work, kModular), work, "NCC_IHNW001");
  }
  {
    ModularWork work;
    WriteFile(work / "sg01/io_transposes.json",
              R"([{"input_name": "weight.2", "reshape": [1024, 512], "transpose": [1, 0]}])");
    ExpectFailure(Wrap(work, kModular), work, "NCC_IIOT001");
  }
  {
    ModularWork work;
    WriteFile(work / "sg01/io_transposes.json",
              R"([{"input_name": "hidden", "reshape": [4, 128], "transpose": [1, 0]}])");
    ExpectFailure(Wrap(work, kModular), work, "NCC_IIOT002");
  }
  {
    ModularWork work;
    fs::remove(work / "sg01/io_transposes.json");
    ExpectFailure(Wrap(work, kModular), work, "NCC_IHNW002");
  }
  {
    // A netlist named on the command line must exist; only the default may be absent.
    ModularWork work;
    std::vector<std::string> args = kModular;
    args.insert(args.end(), {"--netlist", "elsewhere.json"});
    ProcessResult r = Wrap(work, args);
    ExpectFailure(r, work, "IOTX_E300");
    EXPECT_NE(r.err.find("elsewhere.json"), std::string::npos);
  }
}

TEST(WrapCliTest, AnOutputOverAnInputIsRefusedUntouched) {
  // --output naming the NEFF or the specs replaced them with the module, and a second run
  // wrapped that module as its NEFF. Over --hlo it is a wrap in place: allowed.
  WorkDir work("jax_module.textproto");
  fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
  fs::create_hard_link(work / "model.neff", work / "neff-link");
  for (const char* output : {"model.neff", "io.json", "neff-link"}) {
    const std::string neff = ReadFile(work / "model.neff");
    const std::string specs = ReadFile(work / "io.json");
    ProcessResult r = RunTool({"wrap", "--hlo", "m.pb", "--neff", "model.neff", "--io_transposes",
                               "io.json", "--output", output},
                              work.dir.path());
    EXPECT_EQ(r.exit_code, 1) << output;
    EXPECT_NE(r.err.find("IOTX_E307"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(work / "model.neff"), neff) << output;
    EXPECT_EQ(ReadFile(work / "io.json"), specs) << output;
  }
  ProcessResult r = RunTool({"wrap", "--hlo", "m.pb", "--neff", "model.neff", "--io_transposes",
                             "io.json", "--output", "m.pb"},
                            work.dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(WrapCliTest, InputsNamedLikeTheOutputsStaleTemporariesStay) {
  // Inputs whose names spell a dead writer's temporary of --output (the pid above Linux's
  // largest pid_max): the cleanup of killed runs' temporaries before the write leaves them,
  // and removes a real one.
  WorkDir work("jax_module.textproto");
  fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / ".out.pb.tmp-4194305-1-0");
  fs::rename(work / "model.neff", work / ".out.pb.tmp-4194305-2-0");
  fs::rename(work / "m.pb", work / ".out.pb.tmp-4194305-3-0");
  WriteFile(work / ".out.pb.tmp-4194305-4-0", "a killed run's");
  ProcessResult r =
      RunTool({"wrap", "--hlo", ".out.pb.tmp-4194305-3-0", "--neff", ".out.pb.tmp-4194305-2-0",
               "--io_transposes", ".out.pb.tmp-4194305-1-0", "--output", "out.pb"},
              work.dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int k = 1; k <= 3; ++k) {
    EXPECT_TRUE(work.Has(".out.pb.tmp-4194305-" + std::to_string(k) + "-0")) << k;
  }
  EXPECT_EQ(ReadFile(work / ".out.pb.tmp-4194305-2-0"), kNeff);
  EXPECT_FALSE(work.Has(".out.pb.tmp-4194305-4-0"));
  EXPECT_TRUE(work.Has("out.pb"));
}

TEST(WrapCliTest, BadInputFailsWithACodeAndWritesNothing) {
  {
    WorkDir work("jax_module.textproto");
    WriteFile(work / "io.json",
              R"([{"input_name": "Arg_1.6", "reshape": [768, 255], "transpose": [1, 0]}])");
    ProcessResult r = Wrap(work, {"--io_transposes", "io.json"});
    ExpectFailure(r, work, "NCC_IHNW003");
    EXPECT_NE(r.err.find("Reshape size mismatch for input: Arg_1.6"), std::string::npos);
  }
  {
    WorkDir work("jax_module.textproto");
    fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
    fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "m.pb",
                  fs::copy_options::overwrite_existing);
    ProcessResult r = Wrap(work, {"--io_transposes", "io.json"});
    ExpectFailure(r, work, "IOTX_E230");
    EXPECT_NE(r.err.find("m.pb"), std::string::npos);
  }
  {
    WorkDir work("jax_module.textproto");
    fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
    fs::remove(work / "model.neff");
    ProcessResult r = Wrap(work, {"--io_transposes", "io.json"});
    ExpectFailure(r, work, "IOTX_E300");
    EXPECT_NE(r.err.find("model.neff"), std::string::npos);
  }
  {
    WorkDir work("jax_module.textproto");
    fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
    WriteFile(work / "model.neff", "");
    ExpectFailure(Wrap(work, {"--io_transposes", "io.json"}), work, "IOTX_E301");
  }
  for (auto edit : {+[](xla::HloModuleProto& m) {
                      m.set_entry_computation_id(3);
                      m.set_entry_computation_name("x");
                    },
                    +[](xla::HloModuleProto& m) {
                      m.mutable_computations(1)->mutable_instructions(0)->clear_shape();
                    },
                    +[](xla::HloModuleProto& m) {
                      m.mutable_computations(1)->mutable_instructions(2)->set_parameter_number(0);
                    }}) {
    WorkDir work("jax_module.textproto");
    xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
    edit(module);
    WriteFile(work / "m.pb", module.SerializeAsString());
    fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
    ExpectFailure(Wrap(work, {"--io_transposes", "io.json"}), work, "IOTX_E231");
  }
}

TEST(WrapCliTest, UnwritableOutputFailsWithoutLeavingFiles) {
  WorkDir work("jax_module.textproto");
  fs::copy_file(WrapTestdata("jax_io_transposes.json"), work / "io.json");
  ProcessResult r = RunTool({"wrap", "--hlo", "m.pb", "--neff", "model.neff", "--output",
                             "no_such_dir/out.pb", "--io_transposes", "io.json"},
                            work.dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("IOTX_E302"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no_such_dir/out.pb"), std::string::npos) << r.err;
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(work.dir.path())) ++files;
  EXPECT_EQ(files, 3u);  // m.pb, model.neff, io.json
}

TEST(WrapCliTest, UsageErrorsExitTwo) {
  WorkDir work("jax_module.textproto");
  WriteFile(work / "io.json", "[]");
  EXPECT_EQ(Wrap(work, {}).exit_code, 2);  // neither source
  EXPECT_EQ(
      Wrap(work, {"--io_transposes", "io.json", "--modular-io-transposes", "io.json"}).exit_code,
      2);
  EXPECT_EQ(RunTool({"wrap", "--neff", "x", "--output", "y", "--io_transposes", "z"}).exit_code, 2);
  ProcessResult help = RunTool({"wrap", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--hlo", "--neff", "--output", "--io_transposes",
                             "--modular-io-transposes", "--netlist", "hlo_netlist.json"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
  }
}

TEST(InspectCliTest, ShowsTheWrappedCallDecoded) {
  WorkDir work("torch_tuple_module.textproto");
  fs::copy_file(WrapTestdata("torch_io_transposes.json"), work / "t.json");
  ASSERT_EQ(Wrap(work, {"--io_transposes", "t.json"}).exit_code, 0);

  ProcessResult text = RunTool({"inspect", "out.pb"}, work.dir.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* part : {"SyncTensorsGraph.14", "parameter 0  \"p0.1\" as input0  bf16[1,4]",
                           "f32[2,3,4]", "NEFF 15 bytes", "(bf16[1,4], f32[4])",
                           "reshape [4, 4] transpose [1, 0]", "required_transpose="}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
  }

  ProcessResult json = RunTool({"inspect", "out.pb", "--json"}, work.dir.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["module"]["name"], "SyncTensorsGraph.14");
  ASSERT_EQ(j["parameters"].size(), 3u);
  EXPECT_EQ(j["parameters"][2]["frontend_name"], "input2");
  EXPECT_EQ(j["parameters"][2]["shape"], "f32[2,3,4]");
  EXPECT_EQ(j["root"]["opcode"], "custom-call");
  ASSERT_EQ(j["neff_calls"].size(), 1u);
  const auto& call = j["neff_calls"][0];
  EXPECT_EQ(call["neff_bytes"], kNeff.size());
  ASSERT_EQ(call["operands"].size(), 3u);
  EXPECT_TRUE(call["operands"][0]["transpose"].is_null());
  EXPECT_EQ(call["operands"][1]["transpose"]["reshape"], nlohmann::json({4, 4}));
  EXPECT_EQ(call["operands"][2]["transpose"]["transpose"], nlohmann::json({1, 0}));
  EXPECT_EQ(call["operands"][2]["neff_input_name"], "input2");
  EXPECT_EQ(call["operands"][1]["valid"], true);
  EXPECT_TRUE(call["attribute_errors"].empty());
}

TEST(InspectCliTest, PlainModuleAndMalformedAttributes) {
  WorkDir work("jax_module.textproto");
  ProcessResult plain = RunTool({"inspect", "m.pb", "--json"}, work.dir.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  nlohmann::json j = nlohmann::json::parse(plain.out);
  EXPECT_EQ(j["neff_calls"].size(), 0u);
  EXPECT_EQ(j["root"]["name"], "add.10");
  EXPECT_EQ(j["module"]["scheduled"], true);

  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  xla::HloInstructionProto* root = module.mutable_computations(1)->mutable_instructions(5);
  root->set_opcode("custom-call");
  root->set_custom_call_target("AwsNeuronNeff");
  root->add_operand_ids(5);
  (*root->mutable_frontend_attributes()->mutable_map())["required_transpose"] = "4,x|1,0";
  WriteFile(work / "bad.pb", module.SerializeAsString());
  ProcessResult bad = RunTool({"inspect", "bad.pb"}, work.dir.path());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("IOTX_E121"), std::string::npos) << bad.err;
  EXPECT_NE(bad.out.find("required_transpose=\"4,x|1,0\""), std::string::npos) << bad.out;

  // A spec that parses but does not fit its operand (f32[6144,256]): the runtime would refuse
  // it, and inspect passed it as sound.
  (*root->mutable_frontend_attributes()->mutable_map())["required_transpose"] = ";;4,4|1,0";
  WriteFile(work / "unfit.pb", module.SerializeAsString());
  ProcessResult unfit = RunTool({"inspect", "unfit.pb", "--json"}, work.dir.path());
  EXPECT_EQ(unfit.exit_code, 1);
  EXPECT_NE(unfit.err.find("NCC_IHNW003"), std::string::npos) << unfit.err;
  EXPECT_NE(unfit.err.find("[6144, 256] to [4, 4]"), std::string::npos) << unfit.err;
  EXPECT_EQ(nlohmann::json::parse(unfit.out)["neff_calls"][0]["attribute_errors"].size(), 1u);
  (*root->mutable_frontend_attributes()->mutable_map())["required_transpose"] = ";;6144,256|1,0";
  WriteFile(work / "fit.pb", module.SerializeAsString());
  EXPECT_EQ(RunTool({"inspect", "fit.pb"}, work.dir.path()).exit_code, 0);

  ProcessResult missing = RunTool({"inspect", "nope.pb"}, work.dir.path());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("IOTX_E300"), std::string::npos);
}

}  // namespace
}  // namespace iotx::test
