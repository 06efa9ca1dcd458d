// The command line of the `iotx` tool: every subcommand's options, help text and checks, the
// parse, and the dispatch to its Run function (cmd_<name>.h). The only file that parses CLI11's
// headers, which are large: the commands themselves and main() (iotx.cc) are plain C++.
#include "command_line.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cmd_apply.h"
#include "cmd_bench.h"
#include "cmd_codes.h"
#include "cmd_inspect.h"
#include "cmd_materialize.h"
#include "cmd_plan.h"
#include "cmd_simplify.h"
#include "cmd_validate.h"
#include "cmd_wrap.h"
#include "command.h"
#include "core/text.h"
#include "int_list.h"
#include "iotx/version.h"
#include "permute_args.h"

namespace iotx::cli {
namespace {

// Rejects what ParseIntList rejects, so a malformed list is a usage error (exit 2) reported by
// CLI11 with the option's name.
CLI::Validator IntListValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const auto parsed = ParseIntList(value);
        return parsed ? std::string() : parsed.error().message;
      },
      /*validator_desc=*/"");
}

// A path or K/N option given as "": a shell variable that expanded to nothing. Without this an
// empty --shard read as no --shard at all (every shard converted on every host), and an empty
// path failed later with a file error that named no option.
CLI::Validator NotEmpty(std::string what) {
  return CLI::Validator(
      [what](std::string& value) {
        return value.empty() ? "is empty; give " + what : std::string();
      },
      /*validator_desc=*/"");
}

// A number option that must be at least `min` ("0 or more", "more than 0" for min_exclusive):
// says so in those words, where CLI11's ranges print the bounds of a double (300 digits).
CLI::Validator AtLeast(double min, bool min_exclusive) {
  const std::string bound =
      min_exclusive ? "more than " + CLI::detail::to_string(min)
                    : CLI::detail::to_string(min) + " or more";
  return CLI::Validator(
      [min, min_exclusive, bound](std::string& value) -> std::string {
        double number = 0;
        if (!CLI::detail::lexical_cast(value, number)) return "'" + value + "' is not a number";
        if (number < min || (min_exclusive && number == min)) {
          return "must be " + bound + ", got " + value;
        }
        return std::string();
      },
      min_exclusive ? "POSITIVE" : "NONNEGATIVE");
}

// The options `iotx plan` and `iotx bench` share.
void AddPermuteOptions(CLI::App* cmd, PermuteArgs& args) {
  cmd->add_option("--dtype", args.dtype,
                  "Element type, e.g. f32, bf16, i8, f64, c128 (only its size matters to the "
                  "kernel)")
      ->capture_default_str();
  cmd->add_option("--shape", args.shape,
                  "Source shape, comma-separated, e.g. 6144,256. With --reshape it is the "
                  "tensor's original shape; without, the shape after the reshape")
      ->required()
      ->check(IntListValidator());
  cmd->add_option("--reshape", args.reshape,
                  "Fold the flat tensor into these dims first, e.g. 3,16,128,2,2,64 (must keep "
                  "the element count)")
      ->check(IntListValidator());
  cmd->add_option("--transpose", args.transpose,
                  "Permutation of the (reshaped) axes, e.g. 0,4,5,3,1,2; output axis i is "
                  "source axis P[i] (default: identity)")
      ->check(IntListValidator());
}

void AddCodesCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand("codes", "List the stable diagnostic codes and what they mean");
  cmd->callback([&ctx] { ctx.exit_code = RunCodes(); });
}

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

void AddValidateCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check io_transposes.json and hlo_netlist.json files; report every problem found");
  auto options = std::make_shared<ValidateOptions>();
  cmd->add_option("FILE", options->files,
                  "io_transposes.json files, each checked on its own, e.g. io_transposes.json");
  cmd->add_option("--netlist", options->netlist,
                  "hlo_netlist.json to check; also gives the forbidden set and the partition\n"
                  "inputs for the other files, e.g. --netlist hlo_netlist.json");
  cmd->add_option("--modular", options->modular,
                  "Per-partition io_transposes files, checked and then combined as the wrapper\n"
                  "does (repeated names across files, forbidden intermediates), e.g.\n"
                  "--modular sg00/io_transposes.json sg01/io_transposes.json")
      ->expected(1, -1);
  cmd->add_flag("--json", options->json,
                "Print the diagnostics as a JSON array on stdout instead of text on stderr");
  cmd->footer(
      "Every element is checked: keys and JSON types, transpose a permutation, dims >= 0,\n"
      "product within int64, input_name usable in a file name, no input_name repeated in a file.\n"
      "Put FILE arguments before --modular (which takes every file after it).\n"
      "\n"
      "Examples:\n"
      "  iotx validate examples/io_transposes.json\n"
      "  iotx validate --netlist hlo_netlist.json --modular sg00/io_transposes.json "
      "sg01/io_transposes.json\n"
      "  iotx validate --json io_transposes.json\n"
      "\n"
      "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 usage error.");
  cmd->callback([&ctx, options] {
    if (options->files.empty() && options->netlist.empty() && options->modular.empty()) {
      throw CLI::ValidationError(
          "validate", "nothing to check: give FILE, --netlist FILE or --modular FILE...");
    }
    ctx.exit_code = RunValidate(*options);
  });
}

void AddMaterializeCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<MaterializeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "materialize",
      "Run the compiler's producer job on a work directory (SPEC section 6): simplify its\n"
      "io_transposes.json against the tensors of inp-000.p, and link transposed inputs into\n"
      "the partition dirs");
  cmd->add_option("WORKDIR", args->workdir,
                  "Compiler work directory holding io_transposes.json, inp-000.p and sg*/, "
                  "nc*/sg*/ partition dirs, e.g. build/workdir")
      ->required();
  cmd->add_flag("--verify", args->verify,
                "Verify pipeline: also write transposed_inputs/value_<name>.npy for every input "
                "(device layout, or unchanged without a spec) and transposed_inputs/inp-000.p");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but warnings and errors");
  cmd->footer(
      "Steps: every spec must name a tensor of inp-000.p and is simplified against its shape;\n"
      "io_transposes.json is replaced (atomically) by the simplified list when that changes\n"
      "its bytes; with --verify transposed_inputs/ is filled; then every *.npy and *.npy.meta\n"
      "of transposed_inputs/ is symlinked, to its real path, into every sg*/ and nc*/sg*/ dir\n"
      "(an existing link is replaced atomically). Everything is checked before the first\n"
      "write; nothing is written outside WORKDIR (a symlink leading out is an error).\n"
      "Without io_transposes.json or inp-000.p it says so and changes nothing. Re-running is\n"
      "safe and gives the same bytes; a run killed midway leaves no truncated file.\n"
      "\n"
      "Example:\n"
      "  iotx materialize build/workdir --verify\n"
      "\n"
      "Exit status: 0 done (or nothing to do), 1 failed (diagnostic on stderr), 2 usage error.");
  cmd->callback([&ctx, args] { ctx.exit_code = RunMaterialize(*args); });
}

void AddApplyCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ApplyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "apply",
      "Put tensors into their device layout on the host, per an io_transposes file: each\n"
      "spec is simplified against its tensor and applied by the parallel kernel. Takes .npy\n"
      "files, a pickle, a safetensors file or a sharded checkpoint (its index)");
  cmd->add_option("--io-transposes", args->io_transposes,
                  "The io_transposes.json to apply, e.g. --io-transposes work/io_transposes.json")
      ->required()
      ->check(NotEmpty("the io_transposes.json to apply"))
      ->type_name("FILE");
  CLI::Option* input =
      cmd->add_option("--input", args->input,
                      "One tensor as NAME=FILE.npy (repeatable), e.g. --input p0=p0.npy "
                      "--input weight_7=w.npy")
          ->type_name("NAME=FILE")
          ->allow_extra_args(false);
  CLI::Option* inputs =
      cmd->add_option("--inputs", args->inputs,
                      "All tensors from one file: a pickle of {name: numpy array}, a "
                      "safetensors file (told apart by content), or a sharded checkpoint's "
                      "index (a name ending in .index.json), e.g. --inputs inp-000.p, --inputs "
                      "model.safetensors or --inputs model.safetensors.index.json")
          ->check(NotEmpty("the tensor file to read"))
          ->type_name("FILE");
  input->excludes(inputs);
  cmd->add_option("--out-dir", args->out_dir,
                  "Where the outputs go (created when missing; an output that would replace an "
                  "input file is refused), e.g. --out-dir device/")
      ->required()
      ->check(NotEmpty("the directory the outputs go to"))
      ->type_name("DIR");
  cmd->add_option("--format", args->format,
                  "npy: DIR/value_<NAME>.npy per tensor; safetensors: one DIR/<stem>.safetensors "
                  "(stem of --inputs, or \"inputs\"), or for a sharded checkpoint the same "
                  "shard files and index. Default: safetensors for safetensors input, else npy. "
                  "E.g. --format safetensors")
      ->check(CLI::IsMember({"npy", "safetensors"}))
      ->type_name("FORMAT");
  cmd->add_option("--shard", args->shard,
                  "Sharded checkpoint only: convert the shard files at positions K, K+N, "
                  "K+2N, ... of the sorted shard names (K from 0), so N hosts share the work "
                  "without talking to each other, e.g. --shard $SLURM_ARRAY_TASK_ID/4")
      ->check(NotEmpty("this host's index and the number of hosts, e.g. --shard 0/4"))
      ->type_name("K/N");
  cmd->add_flag("--finish-index", args->finish_index,
                "Sharded checkpoint only: write no tensor; write DIR's index if every shard's "
                "output is complete, else fail naming the shards still missing");
  cmd->add_flag("--no-sync", args->no_sync,
                "Do not wait for the disk: outputs are complete and renamed into place "
                "atomically, but may still be only in memory when iotx exits (like "
                "cp); a power loss can lose them. Default: fsync before each rename");
  CLI::Option* buffered = cmd->add_flag(
      "--buffered-writes", args->buffered_writes,
      "Write every output through the page cache. Default: durable outputs go straight "
      "from iotx's buffers to the disk (O_DIRECT) where the file system supports it, so "
      "the bytes are not copied into memory only to be flushed by the fsync, and the "
      "page cache keeps what it held (--no-sync outputs too past the kernel's dirty-page "
      "limit: see --direct-writes)");
  cmd->add_flag("--direct-writes", args->direct_writes,
                "Write outputs straight to the disk (O_DIRECT) with --no-sync too. Default "
                "with --no-sync: only when the outputs hold more than the kernel lets wait "
                "unflushed in memory (vm.dirty_bytes, or vm.dirty_ratio of the available "
                "memory; less in a memory cgroup with less room, such as a container's), past "
                "which writes through the page cache wait for the disk anyway")
      ->excludes(buffered);
  cmd->add_option("--read-buffer-mib", args->read_buffer_mib,
                  "A tensor to permute of up to this many MiB is read from its file into one of "
                  "two buffers (a copy, cheaper than the kernel faulting in a mapping's pages); "
                  "a larger one is read through a memory mapping. A stacked tensor whose spec "
                  "keeps its leading dims in place is read in pieces of about 16 MiB, which is "
                  "what counts. Lower it to bound memory; 0 maps every source. E.g. "
                  "--read-buffer-mib 64")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 24))
      ->type_name("MIB");
  cmd->add_option("--cached-reads", args->cached_reads,
                  "How a tensor read into a buffer reaches the kernel when the page cache holds "
                  "most of it: copy (pread into the buffer), map (the kernel reads the file's "
                  "memory mapping: no copy, but a page fault per 4 KiB page), or auto: whichever "
                  "a probe of ~1 ms finds cheaper on this machine (mapping wins where the CPU "
                  "walks a guest's page tables, copying under a hypervisor's shadow paging). "
                  "Uncached tensors are read from the disk into the buffer either way")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "map", "copy"}));
  cmd->add_flag("--quiet,-q", args->quiet,
                "Print nothing but warnings and errors (no progress bar, no summary)");
  cmd->footer(
      "Every spec must name a given tensor and hold its element count; tensors without a\n"
      "spec are written unchanged. dtype names carry through (.npy descr such as <V2 for\n"
      "bfloat16; safetensors dtype names and __metadata__). Reading, permuting and writing\n"
      "overlap across tensors and files, and memory stays near a few tensors whatever the\n"
      "checkpoint's size. Every file is written through a temporary and renamed into place:\n"
      "an error or a kill leaves no partial file (files finished before it stay). An input\n"
      "that changes while it is read is an error (IOTX_E301) and nothing made from it is kept.\n"
      "A progress bar (bytes, rate, time left) shows on stderr when it is a terminal.\n"
      "\n"
      "Sharded checkpoints (model-00001-of-00030.safetensors ... and\n"
      "model.safetensors.index.json): the outputs keep the shard layout, each shard's tensors\n"
      "and __metadata__ in a file of the same name, and the index is copied unchanged once\n"
      "every shard's output is complete. A shard whose output is complete already (size and\n"
      "header as expected) is skipped, so a killed run is finished by running it again. Many\n"
      "hosts split the shards with --shard K/N into one shared --out-dir; whichever run sees\n"
      "every shard complete writes the index (or run --finish-index at the end). See\n"
      "docs/sharding.md for Slurm, Kubernetes and ssh.\n"
      "\n"
      "Examples:\n"
      "  iotx apply --io-transposes io_transposes.json --input p0=p0.npy --out-dir dev/\n"
      "  iotx apply --io-transposes io_transposes.json --inputs inp-000.p --out-dir dev/\n"
      "  iotx apply --io-transposes io_transposes.json --inputs model.safetensors "
      "--out-dir dev/\n"
      "  iotx apply --io-transposes io_transposes.json --inputs "
      "ckpt/model.safetensors.index.json \\\n"
      "      --out-dir dev/ --shard 2/8\n"
      "\n"
      "Exit status: 0 written, 1 failed (diagnostic on stderr), 2 usage error.");
  cmd->callback([&ctx, args] { ctx.exit_code = RunApply(*args); });
}

void AddWrapCommand(CLI::App& app, CommandContext& ctx) {
  auto options = std::make_shared<WrapOptions>();
  CLI::App* cmd = app.add_subcommand(
      "wrap",
      "Wrap an HLO module's entry computation into one AwsNeuronNeff custom-call that carries\n"
      "the NEFF and the static IO transposes (the hlo-neff-wrapper). With no transposes and no\n"
      "zero-sized parameters it says so and writes nothing.");
  cmd->add_option("--hlo", options->hlo,
                  "Serialized xla.HloModuleProto to wrap, e.g. --hlo model.hlo_module.pb")
      ->required();
  cmd->add_option("--neff", options->neff,
                  "NEFF file stored as the custom-call's backend_config, e.g. --neff model.neff")
      ->required();
  cmd->add_option("--output", options->output,
                  "Where to write the wrapped module (atomically), e.g. --output wrapped.pb")
      ->required();
  CLI::Option_group* source = cmd->add_option_group(
      "io_transposes", "Exactly one of the single or the modular io_transposes");
  source
      ->add_option("--io_transposes,--io-transposes", options->io_transposes,
                   "One io_transposes.json, e.g. --io_transposes io_transposes.json")
      ->check(NotEmpty("the io_transposes.json to use"));
  source
      ->add_option("--modular-io-transposes", options->modular,
                   "The per-partition io_transposes.json files of the modular flow, space\n"
                   "separated, e.g. --modular-io-transposes \"sg00/io_transposes.json "
                   "sg01/io_transposes.json\"")
      ->expected(1, -1);
  source->require_option(1);
  CLI::Option* netlist =
      cmd->add_option("--netlist", options->netlist,
                      "hlo_netlist.json of the modular flow; used when present, required with\n"
                      "two or more modular files, e.g. --netlist hlo_netlist.json")
          ->capture_default_str();
  cmd->callback([options, netlist, &ctx] {
    // An empty file list is a usage error (exit 2), not a file that cannot be opened.
    if (options->io_transposes.empty() && !options->modular.empty()) {
      bool any = false;
      for (const std::string& value : options->modular) {
        any = any || value.find_first_not_of(" \t\n") != std::string::npos;
      }
      if (!any) {
        throw CLI::ValidationError("--modular-io-transposes",
                                   "names no file; give the partition files, space separated, "
                                   "e.g. \"sg00/io_transposes.json sg01/io_transposes.json\"");
      }
    }
    options->netlist_given = netlist->count() > 0;
    ctx.exit_code = RunWrap(*options);
  });
}

void AddInspectCommand(CLI::App& app, CommandContext& ctx) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarize an HLO module: entry parameters (number, name, frontend name, shape), the root,\n"
      "and every AwsNeuronNeff call with its valid_inputs / required_transpose /\n"
      "neff_input_names decoded per operand and the NEFF size.");
  cmd->add_option("module", options->module,
                  "Serialized xla.HloModuleProto, e.g. iotx inspect wrapped.pb")
      ->required();
  cmd->add_flag("--json", options->json,
                "Print the summary as JSON, e.g. iotx inspect m.pb --json");
  cmd->callback([options, &ctx] { ctx.exit_code = RunInspect(*options); });
}

void AddPlanCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Plan a permute and print the folded problem, kernel, tile, threading and SBUF mapping.\n"
      "Example: iotx plan --dtype f32 --shape 6144,256 --reshape 3,16,128,2,2,64 "
      "--transpose 0,4,5,3,1,2");
  AddPermuteOptions(cmd, args->permute);
  cmd->add_option("--threads", args->threads,
                  "Upper bound on threads (PlanOptions::max_threads), e.g. 2; 0 = the arena's")
      ->check(AtLeast(0, /*min_exclusive=*/false))
      ->capture_default_str();
  cmd->add_option("--stores", args->stores,
                  "auto (streaming for large outputs, for staged ones where calibrated "
                  "faster, and from half the size for one thread's tiles), regular or "
                  "streaming, e.g. streaming")
      ->check(CLI::IsMember({"auto", "regular", "streaming"}))
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Device generation whose SBUF geometry is reported: trn1, trn2 or trn3")
      ->check(CLI::IsMember({"trn1", "trn2", "trn3"}))
      ->capture_default_str();
  cmd->callback([args, &ctx] { ctx.exit_code = RunPlan(*args); });
}

void AddBenchCommand(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time the permute kernel on one case against glibc memcpy of the same bytes, alternating\n"
      "in one process, and print both GB/s and their ratio (median of repeated runs).\n"
      "Example: iotx bench --dtype f32 --shape 8192,8192 --transpose 1,0 --threads 2");
  AddPermuteOptions(cmd, args->permute);
  cmd->add_option("--threads", args->threads,
                  "Threads for the kernel and for the memcpy baseline (split in equal parts), e.g. 2")
      ->check(AtLeast(1, /*min_exclusive=*/false))
      ->capture_default_str();
  cmd->add_option("--reps", args->reps, "Timed repetitions after warm-up, e.g. 21")
      ->check(AtLeast(1, /*min_exclusive=*/false))
      ->capture_default_str();
  cmd->add_option("--min-seconds", args->min_seconds,
                  "Each repetition runs the case back to back for at least this long, e.g. 0.05")
      ->check(AtLeast(0, /*min_exclusive=*/true))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->add_option("--stores", args->stores,
                  "The kernel's stores: auto (the planner decides), regular or streaming "
                  "(cache-bypassing), e.g. regular")
      ->check(CLI::IsMember({"auto", "regular", "streaming"}))
      ->capture_default_str();
  cmd->add_flag("--no-huge-pages", args->no_huge_pages,
                "Do not advise transparent huge pages for the buffers (4 KiB pages)");
  cmd->add_flag("--check", args->check,
                "Before timing, run the kernel once on a patterned source and compare its output "
                "with an element-by-element permute; a difference fails the command (exit 1) "
                "and names the first element that differs");
  cmd->callback([args, &ctx] { ctx.exit_code = RunBench(*args); });
}

void AddCommands(CLI::App& app, CommandContext& ctx) {
  // In the order `iotx --help` lists them.
  AddCodesCommand(app, ctx);
  AddSimplifyCommand(app, ctx);
  AddValidateCommand(app, ctx);
  AddMaterializeCommand(app, ctx);
  AddApplyCommand(app, ctx);
  AddWrapCommand(app, ctx);
  AddInspectCommand(app, ctx);
  AddPlanCommand(app, ctx);
  AddBenchCommand(app, ctx);
}

// True when argv[1] is meant as a command but names none: CLI11 would only say "A subcommand
// is required".
bool UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  try {
    app.get_subcommand(argv[1]);
    return false;
  } catch (const CLI::OptionNotFound&) {
    return true;
  }
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  CLI::App app{
      "iotx: static IO transposes for device compilers.\n"
      "Reads and checks io_transposes.json / hlo_netlist.json, simplifies specs, plans and runs\n"
      "the permute kernel, materializes transposed inputs in a compiler work directory and\n"
      "stamps transposes onto an AwsNeuronNeff custom-call in an HLO module.",
      "iotx"};
  app.set_version_flag("--version", std::string("iotx ") + IOTX_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success, 1 the command failed (diagnostic on stderr), 2 usage error.\n"
      "Run `iotx <command> --help` for a command's options; `iotx codes` lists error codes.");

  CommandContext ctx;
  AddCommands(app, ctx);
  if (UnknownCommand(app, argc, argv)) {
    std::string names;
    for (const CLI::App* command : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    std::cerr << "iotx: unknown command " << iotx::Excerpt(argv[1]) << "; the commands are "
              << names << "\nRun with --help for more information.\n";
    return kExitUsage;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return ctx.exit_code;
}

}  // namespace iotx::cli
