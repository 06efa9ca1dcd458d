// Reading modules: the schema subset against protoc and a richer schema, the entry
// computation, parameters and their frontend names, and bad input.
#include "hlo/hlo_module.h"

#include <gtest/gtest.h>

#include <string>

#include "hlo/hlo_shape.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "wrap/wrap_fixtures.h"

namespace iotx::hlo {
namespace {

using test::LoadTextModule;

// A module built from a richer schema (metadata, literals, sharding, input_output_alias,
// schedule, ...) comes back from parse + serialize with every field intact, as read by that
// richer schema through protoc.
TEST(HloModuleTest, FieldsOutsideTheSubsetSurviveARoundTrip) {
  const std::string text = test::ReadFile(test::WrapTestdata("rich_module.textproto"));
  const std::string original =
      test::ProtocEncode("hlo_rich_test.proto", "xla.HloModuleProto", text);
  auto module = ParseModule(original, "rich.pb");
  ASSERT_TRUE(module) << module.error().ToString();
  EXPECT_FALSE(module->GetReflection()->GetUnknownFields(*module).empty());
  auto bytes = SerializeModule(*module);
  ASSERT_TRUE(bytes);
  const std::string before =
      test::ProtocDecode("hlo_rich_test.proto", "xla.HloModuleProto", original);
  const std::string after = test::ProtocDecode("hlo_rich_test.proto", "xla.HloModuleProto", *bytes);
  EXPECT_EQ(after, before);
  EXPECT_NE(before.find("input_output_alias {"), std::string::npos);
  EXPECT_NE(before.find("source_line: 41"), std::string::npos);
}

// The subset's field numbers, read back by protoc's schema-less decoder (FACTS.md section 1).
TEST(HloModuleTest, SubsetFieldNumbersMatchXla) {
  auto bytes = SerializeModule(LoadTextModule("jax_module.textproto"));
  ASSERT_TRUE(bytes);
  test::RawField raw = test::DecodeRaw(*bytes);
  EXPECT_EQ(raw.One(1).value, "jit_layer");  // name
  EXPECT_EQ(raw.One(2).value, "main.10");    // entry_computation_name
  EXPECT_EQ(raw.One(6).Int(), 10);           // entry_computation_id
  EXPECT_EQ(raw.One(5).Int(), 41);           // id
  ASSERT_EQ(raw.All(3).size(), 2u);          // computations
  const test::RawField& entry = *raw.All(3)[1];
  EXPECT_EQ(entry.One(1).value, "main.10");
  EXPECT_EQ(entry.One(5).Int(), 10);               // computation id
  EXPECT_EQ(entry.One(6).Int(), 10);               // root_id
  EXPECT_TRUE(entry.One(4).is_message);            // program_shape
  const test::RawField& param = *entry.All(2)[1];  // instructions
  EXPECT_EQ(param.One(1).value, "Arg_1.6");
  EXPECT_EQ(param.One(2).value, "parameter");
  EXPECT_EQ(param.One(9).Int(), 1);          // parameter_number
  EXPECT_EQ(param.One(35).Int(), 6);         // id
  EXPECT_EQ(param.One(3).One(2).Int(), 11);  // shape.element_type = F32
  EXPECT_TRUE(raw.One(4).is_message);        // host_program_shape
  EXPECT_TRUE(raw.One(7).is_message);        // schedule
}

TEST(HloModuleTest, PrintsShapesLikeHloText) {
  xla::HloModuleProto module = LoadTextModule("torch_tuple_module.textproto");
  const auto& entry = module.computations(0);
  EXPECT_EQ(ShapeToString(entry.instructions(0).shape()), "bf16[4,4]");
  EXPECT_EQ(ShapeToString(entry.instructions(2).shape()), "f32[2,3,4]");
  EXPECT_EQ(ShapeToString(entry.instructions(5).shape()), "(bf16[1,4], f32[4])");
  xla::ShapeProto scalar;
  scalar.set_element_type(xla::S32);
  EXPECT_EQ(ShapeToString(scalar), "s32[]");
  EXPECT_EQ(ArrayElementCount(scalar), 1);
  EXPECT_EQ(ArrayElementCount(entry.instructions(2).shape()), 24);
  EXPECT_EQ(ArrayElementCount(entry.instructions(5).shape()), std::nullopt);
}

// Issue 18: a dynamic dimension is a bound, printed "<=10" as XLA's printer does.
TEST(HloModuleTest, PrintsDynamicDimensionsAsTheirBound) {
  xla::ShapeProto shape;
  shape.set_element_type(xla::F32);
  shape.add_dimensions(10);
  shape.add_dimensions(4);
  shape.add_is_dynamic_dimension(true);
  shape.add_is_dynamic_dimension(false);
  EXPECT_EQ(ShapeToString(shape), "f32[<=10,4]");
  // A shorter is_dynamic_dimension list leaves the rest static.
  shape.clear_is_dynamic_dimension();
  shape.add_is_dynamic_dimension(false);
  EXPECT_EQ(ShapeToString(shape), "f32[10,4]");
}

TEST(HloModuleTest, FindsTheEntryComputationById) {
  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  EXPECT_EQ(FindEntryComputation(module, "m.pb"), 1);
  // The id wins over a stale name.
  module.set_entry_computation_name("region_0.4");
  EXPECT_EQ(FindEntryComputation(module, "m.pb"), 1);
}

TEST(HloModuleTest, FallsBackToTheEntryComputationName) {
  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  module.set_entry_computation_id(999);
  EXPECT_EQ(FindEntryComputation(module, "m.pb"), 1);
  // An id of 0 may just be unset (proto3), so a name decides even if a computation has id 0.
  module.mutable_computations(0)->set_id(0);
  module.set_entry_computation_id(0);
  EXPECT_EQ(FindEntryComputation(module, "m.pb"), 1);
  module.clear_entry_computation_name();
  EXPECT_EQ(FindEntryComputation(module, "m.pb"), 0);
}

TEST(HloModuleTest, NoEntryComputationIsAStructureError) {
  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  module.set_entry_computation_id(999);
  module.set_entry_computation_name("nope");
  auto r = FindEntryComputation(module, "m.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kHloStructure);
  EXPECT_EQ(r.error().file, "m.pb");
  EXPECT_NE(r.error().message.find("\"main.10\" (id 10)"), std::string::npos);
}

TEST(HloModuleTest, ParametersComeInNumberOrderWithFrontendNames) {
  xla::HloModuleProto module = LoadTextModule("torch_tuple_module.textproto");
  auto parameters = EntryParameters(module, module.computations(0), "m.pb");
  ASSERT_TRUE(parameters) << parameters.error().ToString();
  ASSERT_EQ(parameters->size(), 3u);
  EXPECT_EQ((*parameters)[0].frontend_name, "input0");  // its neff_input_names attribute
  EXPECT_EQ((*parameters)[0].id, 1);
  EXPECT_EQ((*parameters)[1].frontend_name, "input1");
  EXPECT_EQ((*parameters)[1].instruction_index, 0);
  EXPECT_EQ((*parameters)[2].element_count, 24);
}

TEST(HloModuleTest, FrontendNameFallsBackToInstructionThenProgramShape) {
  xla::HloModuleProto module = LoadTextModule("jax_module.textproto");
  xla::HloComputationProto& entry = *module.mutable_computations(1);
  entry.mutable_instructions(1)->clear_name();
  entry.mutable_program_shape()->set_parameter_names(1, "weights");
  entry.mutable_instructions(2)->clear_name();
  entry.mutable_program_shape()->set_parameter_names(2, "");  // then the module's
  auto parameters = EntryParameters(module, entry, "m.pb");
  ASSERT_TRUE(parameters) << parameters.error().ToString();
  EXPECT_EQ((*parameters)[0].frontend_name, "Arg_0.5");
  EXPECT_EQ((*parameters)[1].frontend_name, "weights");
  EXPECT_EQ((*parameters)[2].frontend_name, "Arg_2.7");
}

Error ParametersError(xla::HloModuleProto module, int computation = 1) {
  auto r = EntryParameters(module, module.computations(computation), "m.pb");
  EXPECT_FALSE(r);
  return r ? Error() : r.error();
}

TEST(HloModuleTest, RejectsBadParameters) {
  xla::HloModuleProto base = LoadTextModule("jax_module.textproto");
  auto edit = [&base](auto change) {
    xla::HloModuleProto module = base;
    change(*module.mutable_computations(1));
    return ParametersError(module);
  };
  Error no_shape = edit([](auto& c) { c.mutable_instructions(1)->clear_shape(); });
  EXPECT_EQ(no_shape.code, ErrorCode::kHloStructure);
  EXPECT_NE(no_shape.message.find("\"Arg_1.6\" (id 6) has no shape"), std::string::npos);

  Error duplicate = edit([](auto& c) { c.mutable_instructions(2)->set_parameter_number(1); });
  EXPECT_EQ(duplicate.code, ErrorCode::kHloStructure);
  EXPECT_NE(duplicate.message.find("duplicate parameter number 1"), std::string::npos);

  Error gap = edit([](auto& c) { c.mutable_instructions(2)->set_parameter_number(5); });
  EXPECT_NE(gap.message.find("parameter 2 is missing"), std::string::npos) << gap.message;

  Error negative = edit([](auto& c) { c.mutable_instructions(0)->set_parameter_number(-1); });
  EXPECT_NE(negative.message.find("expected 0 or more"), std::string::npos);

  Error comma = edit([](auto& c) { c.mutable_instructions(0)->set_name("a,b"); });
  EXPECT_NE(comma.message.find("joins names with ','"), std::string::npos);

  Error same = edit([](auto& c) { c.mutable_instructions(0)->set_name("Arg_1.6"); });
  EXPECT_NE(same.message.find("share the frontend name \"Arg_1.6\""), std::string::npos);

  Error no_type =
      edit([](auto& c) { c.mutable_instructions(0)->mutable_shape()->clear_element_type(); });
  EXPECT_NE(no_type.message.find("without an element type"), std::string::npos);

  Error huge = edit([](auto& c) {
    auto* dims = c.mutable_instructions(0)->mutable_shape()->mutable_dimensions();
    dims->Set(0, int64_t{1} << 40);
    dims->Set(1, int64_t{1} << 40);
  });
  EXPECT_NE(huge.message.find("overflows int64"), std::string::npos);
}

TEST(HloModuleTest, RejectsFilesThatAreNotModules) {
  for (const std::string& bytes :
       {std::string("{\"not\": \"a module\"}"), std::string("HloModule m\n\nENTRY e {}"),
        std::string(""), std::string("\x0a\x03\xff\xfe\xfd", 5)}) {
    auto r = ParseModule(bytes, "x.pb");
    ASSERT_FALSE(r) << bytes;
    EXPECT_EQ(r.error().code, ErrorCode::kHloFormat);
    EXPECT_EQ(r.error().file, "x.pb");
    EXPECT_NE(r.error().message.find("not a serialized xla.HloModuleProto"), std::string::npos);
  }
}

TEST(HloModuleTest, ReadModuleNamesAMissingFile) {
  test::TempDir dir;
  auto r = ReadModule(dir / "missing.pb");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIoOpen);
  EXPECT_EQ(r.error().file, dir / "missing.pb");
}

TEST(HloModuleTest, WriteModuleWritesWhatReadModuleReads) {
  test::TempDir dir;
  xla::HloModuleProto module = LoadTextModule("torch_tuple_module.textproto");
  ASSERT_TRUE(WriteModule(module, dir / "m.pb"));
  auto back = ReadModule(dir / "m.pb");
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->SerializeAsString(), module.SerializeAsString());
  auto serialized = SerializeModule(module);
  ASSERT_TRUE(serialized);
  EXPECT_EQ(test::ReadFile(dir / "m.pb"), *serialized);
}

}  // namespace
}  // namespace iotx::hlo
