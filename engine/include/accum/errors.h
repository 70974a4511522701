#pragma once
// Exceptions the engine throws for failures that are the input's fault.

#include <stdexcept>
#include <string>

namespace accum {

// Data missing, unreadable or corrupt. The message names the file (and the line for CSV).
class DataError : public std::runtime_error {
public:
    explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

// A configuration that cannot run (the message names the option).
class ConfigError : public std::runtime_error {
public:
    explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

// A window's loss or gradient became non-finite (the run stops as diverged).
class DivergedError : public std::runtime_error {
public:
    explicit DivergedError(const std::string& message) : std::runtime_error(message) {}
};

} // namespace accum
