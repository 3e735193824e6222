# Flags shared by every collbench target: warnings and optional sanitizers.
add_library(cb_flags INTERFACE)
target_compile_options(cb_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${COLLBENCH_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# GCC 12 at -O2/-O3 reports -Wrestrict inside libstdc++ for `"lit" + std::string&&`
# (GCC bug 105329, a false positive in the library's own memcpy); silence only that.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(cb_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(COLLBENCH_SANITIZE)
  target_compile_options(cb_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${COLLBENCH_SANITIZE} -fno-omit-frame-pointer>)
  target_link_options(cb_flags INTERFACE -fsanitize=${COLLBENCH_SANITIZE})
endif()
target_include_directories(cb_flags INTERFACE ${PROJECT_SOURCE_DIR}/src ${CMAKE_BINARY_DIR}/generated)
