// `iotx simplify`: the producer's dim-folding rule (SPEC section 2) on one spec.
#include <iostream>
#include <string>

#include "cli_output.h"
#include "command.h"
#include "int_list.h"
#include "iotx/spec.h"

namespace iotx::cli {
namespace {

struct SimplifyOptions {
  std::string shape;
  std::string reshape;
  std::string transpose;
};

int RunSimplify(const SimplifyOptions& options) {
  // The validators already accepted all three lists.
  const std::vector<int64_t> shape = *ParseIntList(options.shape);
  const std::vector<int64_t> reshape = *ParseIntList(options.reshape);
  const std::vector<int64_t> transpose = *ParseIntList(options.transpose);
  const TransposeSpec spec{Dims(std::span<const int64_t>(reshape)),
                           Dims(std::span<const int64_t>(transpose))};
  const Expected<TransposeSpec> simplified = Simplify(spec, shape);
  if (!simplified) {
    PrintError(simplified.error());
    return kExitFailure;
  }
  std::cout << ToJson(*simplified) << '\n';
  return kExitOk;
}

}  // namespace

void AddSimplifyCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "simplify",
      "Fold a reshape+transpose spec the way the compiler's producer does (SPEC section 2)\n"
      "and print the result as JSON");
  auto options = std::make_shared<SimplifyOptions>();
  cmd->add_option("--shape", options->shape,
                  "Original shape of the input tensor, e.g. --shape 6144,256 (\"\" for a scalar)")
      ->required()
      ->type_name("INT,...")
      ->check(IntListValidator());
  cmd->add_option("--reshape", options->reshape,
                  "The spec's reshape; its product must equal the shape's, e.g. "
                  "--reshape 3,16,128,2,2,64")
      ->required()
      ->type_name("INT,...")
      ->check(IntListValidator());
  cmd->add_option("--transpose", options->transpose,
                  "The spec's transpose, a permutation of the reshape's axes, e.g. "
                  "--transpose 0,4,5,3,1,2")
      ->required()
      ->type_name("INT,...")
      ->check(IntListValidator());
  cmd->footer(
      "Reshape dims i and i+1 merge when they are neighbours i, i+1 in the transpose and their\n"
      "boundary is not an interior boundary of the original shape; the transpose is renumbered.\n"
      "Lists may also be written like Python lists: --shape '[6144, 256]'.\n"
      "\n"
      "Example:\n"
      "  iotx simplify --shape 6144,256 --reshape 3,16,128,2,2,64 --transpose 0,4,5,3,1,2\n"
      "  {\"reshape\": [3, 2048, 2, 128], \"transpose\": [0, 3, 2, 1]}\n"
      "\n"
      "Exit status: 0 printed, 1 the spec is invalid (diagnostic on stderr), 2 usage error.");
  cmd->callback([&ctx, options] { ctx.exit_code = RunSimplify(*options); });
}

}  // namespace iotx::cli
