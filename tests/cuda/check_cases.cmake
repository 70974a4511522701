# cmake -DTEST_CUDA=test_cuda -DEXPECTED="a;b" -P check_cases.cmake
# Fails when test_cuda --list and the cases registered in CMakeLists.txt differ.
execute_process(COMMAND ${TEST_CUDA} --list OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "test_cuda --list failed (${rc})")
endif()
string(STRIP "${listed}" listed)
string(REPLACE "\n" ";" listed "${listed}")
if(NOT listed STREQUAL EXPECTED)
  message(FATAL_ERROR "test_cuda has the cases [${listed}], tests/cuda/CMakeLists.txt registers [${EXPECTED}]")
endif()
message(STATUS "test_cuda cases: ${listed}")
# SPDX-License-Identifier: GPL-3.0-or-later
