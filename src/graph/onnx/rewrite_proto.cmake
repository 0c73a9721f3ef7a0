# Build-time step: copies the system onnx.proto into the build dir with its
# package renamed, so our generated descriptors never clash with another copy
# of onnx.proto registered in the same process (DESIGN.md, "Graph engine").
# Usage: cmake -DIN=<onnx.proto> -DOUT=<openacl_onnx.proto> -P rewrite_proto.cmake
file(READ "${IN}" text)
string(REGEX REPLACE "\npackage[ \t]+onnx[ \t]*;" "\npackage openacl_onnx;" renamed "${text}")
if(renamed STREQUAL text)
  message(FATAL_ERROR "${IN}: no 'package onnx;' line to rename")
endif()
file(WRITE "${OUT}" "${renamed}")
