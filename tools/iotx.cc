// The `iotx` command: one binary, one subcommand per job (see commands.inc).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>

#include "command.h"
#include "command_line.h"
#include "core/text.h"
#include "iotx/version.h"

namespace {

// Said without allocating: there may be no memory left to build a message with.
constexpr char kOutOfMemory[] =
    "iotx: error: IOTX_E901 out of memory: the command needed more memory than the process may "
    "have (see `ulimit -v` and the sizes of its inputs)\n";

[[noreturn]] void ExitOutOfMemory() {
  const ssize_t ignored = ::write(STDERR_FILENO, kOutOfMemory, sizeof(kOutOfMemory) - 1);
  (void)ignored;
  std::_Exit(iotx::cli::kExitFailure);
}

// The last line of defence: an exception that reaches std::terminate (thrown where none may
// be, such as while another unwinds) is still out of memory with its code and exit status 1,
// never `terminate called ...` and a core dump; anything else is a bug and aborts.
void OnTerminate() {
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::bad_alloc&) {
      ExitOutOfMemory();
    } catch (...) {
    }
  }
  constexpr char kInternal[] = "iotx: error: IOTX_E900 internal error: std::terminate\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kInternal, sizeof(kInternal) - 1);
  (void)ignored;
  std::abort();
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

int main(int argc, char** argv) {
  using namespace iotx::cli;
  std::set_terminate(OnTerminate);
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
  } catch (const std::bad_alloc&) {
    ExitOutOfMemory();
  } catch (const std::system_error& e) {
    // A thread that cannot be started (EAGAIN) under a memory limit is out of memory too.
    if (e.code() == std::errc::resource_unavailable_try_again ||
        e.code() == std::errc::not_enough_memory) {
      ExitOutOfMemory();
    }
    std::cerr << "iotx: error: IOTX_E900 internal error: " << iotx::EscapeControl(e.what())
              << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    // Library code reports errors as values; reaching here means a bug.
    std::cerr << "iotx: error: IOTX_E900 internal error: " << iotx::EscapeControl(e.what())
              << '\n';
    return kExitFailure;
  }
  return ctx.exit_code;
}
