# Flags shared by every collbench target: warnings and optional sanitizers.
add_library(cb_flags INTERFACE)
# Warnings are collbench's own: $<BUILD_INTERFACE> keeps them out of the exported
# collbench::engine (cmake/Install.cmake), whose users choose their own.
target_compile_options(cb_flags INTERFACE
  $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor
                                              -Wno-missing-field-initializers>>
  $<BUILD_INTERFACE:$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${COLLBENCH_WERROR}>>:-Werror>>
  $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>>)
# GCC 12 at -O2/-O3 reports -Wrestrict inside libstdc++ for `"lit" + std::string&&`
# (GCC bug 105329, a false positive in the library's own memcpy); silence only that.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(cb_flags INTERFACE
                         $<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>>)
endif()
if(COLLBENCH_SANITIZE)
  target_compile_options(cb_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${COLLBENCH_SANITIZE} -fno-omit-frame-pointer>)
  target_link_options(cb_flags INTERFACE -fsanitize=${COLLBENCH_SANITIZE})
endif()
# Headers are included relative to src/ ("engine/select.hpp"); installed, src/'s headers and
# config.hpp lie in include/collbench/ (cmake/Install.cmake). The headers need C++20.
target_include_directories(cb_flags INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src> $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/generated>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/collbench>)
target_compile_features(cb_flags INTERFACE cxx_std_20)
