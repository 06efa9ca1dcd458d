// The `iotx` command: one binary, one subcommand per job (see commands.inc).
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "command.h"
#include "command_line.h"
#include "iotx/version.h"

int main(int argc, char** argv) {
  using namespace iotx::cli;
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
  } catch (const std::exception& e) {
    // Library code reports errors as values; reaching here means a bug or exhausted memory.
    std::cerr << "iotx: internal error: " << e.what() << '\n';
    return kExitFailure;
  }
  return ctx.exit_code;
}
