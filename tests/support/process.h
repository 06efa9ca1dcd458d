// Running the built tool, Python and other programs from tests.
#pragma once

#include <string>
#include <vector>

namespace iotx::test {

struct ProcessResult {
  int exit_code = -1;  // exit status, or 128 + signal number if killed
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up on PATH) with the given arguments, feeding `input` on stdin.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& input = "",
                         const std::string& cwd = "");

// Runs the built `iotx` tool.
ProcessResult RunTool(const std::vector<std::string>& args, const std::string& cwd = "");

// Runs `python3 -c code args...` with the interpreter the build found (it has numpy).
ProcessResult RunPython(const std::string& code, const std::vector<std::string>& args = {},
                        const std::string& input = "");

// True when the Python the build found can import numpy.
bool PythonHasNumpy();

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

}  // namespace iotx::test
