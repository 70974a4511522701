#pragma once
// Exceptions the engine throws for failures that are the input's fault.

#include <stdexcept>
#include <string>

namespace accum {

// Data missing, unreadable or corrupt. `where` names the file (and line for CSV).
class DataError : public std::runtime_error {
public:
    explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

// A configuration that cannot run (the message names the option).
class ConfigError : public std::runtime_error {
public:
    explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

} // namespace accum
