// WrapModule on realistic modules: the new entry computation, the three attributes in SPEC's
// formats, what is kept and what is cleared, and the errors.
#include "hlo/wrap.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

#include "iotx/attributes.h"
#include "hlo/hlo_module.h"
#include "support/process.h"
#include "wrap/wrap_fixtures.h"

namespace iotx::hlo {
namespace {

using test::LoadTextModule;
using test::MakeSpecs;

const std::string kNeff = std::string("NEFF\x01\x00\x02binary", 13);

std::string Attribute(const xla::HloInstructionProto& instruction, const std::string& key) {
  const auto& map = instruction.frontend_attributes().map();
  auto it = map.find(key);
  return it == map.end() ? "<absent>" : it->second;
}

TEST(WrapTest, JaxModuleBecomesParametersPlusOneCustomCall) {
  xla::HloModuleProto input = LoadTextModule("jax_module.textproto");
  auto r = WrapModule(
      input, kNeff,
      MakeSpecs({{"Arg_0.5", {3, 2048, 2, 128}, {0, 3, 2, 1}}, {"Arg_1.6", {256, 768}, {1, 0}}}),
      "jax.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_TRUE(r->produced);
  EXPECT_EQ(r->num_parameters, 3u);
  EXPECT_EQ(r->num_transposed, 2u);
  EXPECT_EQ(r->num_zero_sized, 0u);
  EXPECT_TRUE(r->notes.empty());

  const xla::HloModuleProto& out = r->module;
  ASSERT_EQ(out.computations_size(), 2);
  const xla::HloComputationProto& entry = out.computations(1);
  ASSERT_EQ(entry.instructions_size(), 4);
  for (int i = 0; i < 3; ++i) {  // parameters unchanged, byte for byte
    EXPECT_EQ(entry.instructions(i).SerializeAsString(),
              input.computations(1).instructions(i).SerializeAsString());
  }
  const xla::HloInstructionProto& call = entry.instructions(3);
  EXPECT_EQ(call.opcode(), "custom-call");
  EXPECT_EQ(call.custom_call_target(), "AwsNeuronNeff");
  EXPECT_EQ(call.backend_config(), kNeff);
  EXPECT_EQ(call.id(), 10);
  EXPECT_EQ(call.name(), "add.10");
  EXPECT_EQ(call.shape().SerializeAsString(),
            input.computations(1).instructions(5).shape().SerializeAsString());
  EXPECT_EQ(std::vector<int64_t>(call.operand_ids().begin(), call.operand_ids().end()),
            (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(entry.root_id(), 10);
  EXPECT_EQ(Attribute(call, "valid_inputs"), "1,1,1");
  EXPECT_EQ(Attribute(call, "required_transpose"), "3,2048,2,128|0,3,2,1;256,768|1,0;");
  EXPECT_EQ(Attribute(call, "neff_input_names"), "Arg_0.5,Arg_1.6,Arg_2.7");

  // Kept: the other computation, program shapes, module fields. Cleared: the schedule.
  EXPECT_EQ(out.computations(0).SerializeAsString(), input.computations(0).SerializeAsString());
  EXPECT_EQ(entry.program_shape().SerializeAsString(),
            input.computations(1).program_shape().SerializeAsString());
  EXPECT_EQ(out.host_program_shape().SerializeAsString(),
            input.host_program_shape().SerializeAsString());
  EXPECT_EQ(out.name(), "jit_layer");
  EXPECT_EQ(out.entry_computation_id(), 10);
  EXPECT_TRUE(input.has_schedule());
  EXPECT_FALSE(out.has_schedule());
}

TEST(WrapTest, TorchModuleMatchesByNeffInputNamesAndKeepsTheTupleResult) {
  xla::HloModuleProto input = LoadTextModule("torch_tuple_module.textproto");
  auto r = WrapModule(input, kNeff,
                      MakeSpecs({{"input1", {4, 4}, {1, 0}},
                                 {"input2", {2, 12}, {1, 0}},
                                 {"p0.1", {4}, {0}}}),  // an instruction name, not a frontend name
                      "torch.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_TRUE(r->produced);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0].code, ErrorCode::kUnknownInput);
  EXPECT_EQ(r->notes[0].key, "p0.1");
  EXPECT_NE(r->notes[0].message.find("input0, input1, input2"), std::string::npos);

  const xla::HloComputationProto& entry = r->module.computations(0);
  ASSERT_EQ(entry.instructions_size(), 4);
  // Parameters keep their place (parameter 1 first), operands follow parameter numbers.
  EXPECT_EQ(entry.instructions(0).name(), "p1.2");
  const xla::HloInstructionProto& call = entry.instructions(3);
  EXPECT_EQ(std::vector<int64_t>(call.operand_ids().begin(), call.operand_ids().end()),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(call.id(), 13);
  EXPECT_EQ(call.shape().element_type(), xla::TUPLE);
  EXPECT_EQ(call.shape().tuple_shapes_size(), 2);
  EXPECT_EQ(Attribute(call, "valid_inputs"), "1,1,1");
  EXPECT_EQ(Attribute(call, "required_transpose"), ";4,4|1,0;2,12|1,0");
  EXPECT_EQ(Attribute(call, "neff_input_names"), "input0,input1,input2");
  // Only the wrapper's own attributes (issue 18): the old root's neff_output_names described
  // an instruction that is gone.
  EXPECT_EQ(Attribute(call, "neff_output_names"), "<absent>");
  EXPECT_EQ(call.frontend_attributes().map_size(), 3);
  EXPECT_EQ(Attribute(entry.instructions(1), "neff_input_names"), "input0");
}

// Issue 18: the call carries the wrapper's three attributes only, whatever the old root had.
TEST(WrapTest, TheCallDoesNotInheritTheOldRootsAttributes) {
  xla::HloModuleProto input = LoadTextModule("jax_module.textproto");
  xla::HloComputationProto& entry = *input.mutable_computations(1);
  for (xla::HloInstructionProto& instruction : *entry.mutable_instructions()) {
    if (instruction.id() == entry.root_id()) {
      (*instruction.mutable_frontend_attributes()->mutable_map())["root_attr"] = "yes";
    }
  }
  auto r = WrapModule(input, kNeff, MakeSpecs({{"Arg_1.6", {256, 768}, {1, 0}}}), "jax.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  const xla::HloInstructionProto& call = r->module.computations(1).instructions(3);
  EXPECT_EQ(Attribute(call, "root_attr"), "<absent>");
  EXPECT_EQ(call.frontend_attributes().map_size(), 3);
}

// Issue 18 item 10: whether a NEFF fits is decided from its size, before it is read.
TEST(WrapTest, NeffSizeIsCheckedAgainstTheTwoGibLimit) {
  const xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  EXPECT_TRUE(CheckNeffSize(module, 1 << 20, "n.neff"));
  EXPECT_TRUE(CheckNeffSize(module, (uint64_t{1} << 31) - 64 * 1024, "n.neff"));
  for (const uint64_t bytes : {uint64_t{1} << 31, uint64_t{2'200'000'000}, ~uint64_t{0}}) {
    Status status = CheckNeffSize(module, bytes, "n.neff");
    ASSERT_FALSE(status) << bytes;
    EXPECT_EQ(status.error().code, ErrorCode::kHloFormat);
    EXPECT_EQ(status.error().file, "n.neff");
    EXPECT_NE(status.error().message.find("2 GiB"), std::string::npos);
  }
}

TEST(WrapTest, ZeroSizedParameterAloneIsEnoughToWrap) {
  auto r = WrapModule(LoadTextModule("zero_sized_module.textproto"), kNeff, SpecMap(), "z.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_TRUE(r->produced);
  EXPECT_EQ(r->num_zero_sized, 1u);
  const xla::HloInstructionProto& call = r->module.computations(0).instructions(3);
  EXPECT_EQ(Attribute(call, "valid_inputs"), "1,0,1");
  EXPECT_EQ(Attribute(call, "required_transpose"), ";;");
}

TEST(WrapTest, NothingToDoLeavesTheModuleAlone) {
  xla::HloModuleProto input = LoadTextModule("jax_module.textproto");
  auto r = WrapModule(input, kNeff, MakeSpecs({{"not_a_parameter", {2}, {0}}}), "jax.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(r->produced);
  EXPECT_EQ(r->notes.size(), 1u);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(r->module, input));
  auto empty = WrapModule(input, kNeff, SpecMap(), "jax.pb");
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->produced);
}

TEST(WrapTest, ReshapeSizeMismatchIsNccIhnw003) {
  auto r = WrapModule(LoadTextModule("jax_module.textproto"), kNeff,
                      MakeSpecs({{"Arg_1.6", {768, 255}, {1, 0}}}), "jax.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kReshapeSizeMismatch);
  EXPECT_EQ(CodeName(r.error().code), "NCC_IHNW003");
  EXPECT_TRUE(r.error().message.starts_with("Reshape size mismatch for input: Arg_1.6"))
      << r.error().message;
  EXPECT_NE(r.error().message.find("195840"), std::string::npos);  // 768 * 255
  EXPECT_NE(r.error().message.find("196608"), std::string::npos);  // 256 * 768
  EXPECT_EQ(r.error().file, "jax.pb");
}

TEST(WrapTest, TransposeOnATupleParameterIsRefused) {
  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  xla::ShapeProto* shape = module.mutable_computations(1)->mutable_instructions(2)->mutable_shape();
  xla::ShapeProto element = *shape;
  shape->Clear();
  shape->set_element_type(xla::TUPLE);
  *shape->add_tuple_shapes() = element;
  auto r = WrapModule(module, kNeff, MakeSpecs({{"Arg_2.7", {768}, {0}}}), "jax.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kHloStructure);
  EXPECT_NE(r.error().message.find("a transpose needs an array"), std::string::npos);
}

TEST(WrapTest, RootThatIsAParameterGetsAFreshInstruction) {
  xla::HloModuleProto module = LoadTextModule("zero_sized_module.textproto");
  module.mutable_computations(0)->set_root_id(2);  // the identity of Arg_1.2
  auto r = WrapModule(module, kNeff, SpecMap(), "z.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  const xla::HloComputationProto& entry = r->module.computations(0);
  ASSERT_EQ(entry.instructions_size(), 4);
  const xla::HloInstructionProto& call = entry.instructions(3);
  EXPECT_EQ(call.id(), 6);  // the largest id (5) + 1
  EXPECT_EQ(call.name(), "custom-call.6");
  EXPECT_EQ(entry.root_id(), 6);
  EXPECT_EQ(entry.instructions(1).opcode(), "parameter");
  EXPECT_EQ(entry.instructions(1).id(), 2);
}

TEST(WrapTest, MissingRootIsAStructureError) {
  xla::HloModuleProto module = LoadTextModule("zero_sized_module.textproto");
  module.mutable_computations(0)->set_root_id(77);
  auto r = WrapModule(module, kNeff, SpecMap(), "z.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kHloStructure);
  EXPECT_NE(r.error().message.find("root_id 77"), std::string::npos);
}

// Wrapping a module built from the richer schema keeps every field the subset does not name,
// as that schema reads them back; only the schedule and the removed instructions go.
TEST(WrapTest, KeepsFieldsOutsideTheSubset) {
  const std::string text = test::ReadFile(test::WrapTestdata("rich_module.textproto"));
  const std::string bytes = test::ProtocEncode("hlo_rich_test.proto", "xla.HloModuleProto", text);
  auto module = ParseModule(bytes, "rich.pb");
  ASSERT_TRUE(module);
  auto r = WrapModule(*module, kNeff, MakeSpecs({{"Arg_1.6", {768, 768}, {1, 0}}}), "rich.pb");
  ASSERT_TRUE(r) << r.error().ToString();
  auto out = SerializeModule(r->module);
  ASSERT_TRUE(out);
  const std::string before = test::ProtocDecode("hlo_rich_test.proto", "xla.HloModuleProto", bytes);
  const std::string after = test::ProtocDecode("hlo_rich_test.proto", "xla.HloModuleProto", *out);
  for (const char* head : {"input_output_alias {", "frontend_attributes {",
                           "spmd_parameters_shardings {", "host_program_shape {"}) {
    EXPECT_EQ(test::TextBlock(after, head), test::TextBlock(before, head)) << head;
    EXPECT_FALSE(test::TextBlock(before, head).empty()) << head;
  }
  // The first computation (the reduction region) is untouched.
  EXPECT_EQ(test::TextBlock(after, "computations {"), test::TextBlock(before, "computations {"));
  EXPECT_NE(before.find("schedule {"), std::string::npos);
  EXPECT_EQ(after.find("schedule {"), std::string::npos);
  // Parameter metadata and sharding stay; the constant's literal goes with its instruction.
  EXPECT_NE(after.find("op_name: \"params[\\'w\\']\""), std::string::npos) << after;
  EXPECT_NE(after.find("tiles {"), std::string::npos);
  EXPECT_NE(after.find("sharding {"), std::string::npos);
  EXPECT_EQ(after.find("literal {"), std::string::npos);
  EXPECT_NE(after.find("valid_inputs"), std::string::npos);
}

}  // namespace
}  // namespace iotx::hlo
