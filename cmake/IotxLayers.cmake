# One CMake target per folder of src/ ("layer"), linked as a one-way graph that the build checks.
#
#   iotx_add_layer(<name> SOURCES <files...> [DEPENDS <layers...>] [LIBS <targets...>])
#
# makes the static library iotx_<name> from src/<name>/. Its own headers, and those of the
# layers it DEPENDS on, are included as "<layer>/<file>.h"; no other layer's are reachable:
# each layer's include path holds one directory, build/include-scopes/<name>, in which the
# only entry is a link "<name>" to its source folder. A file that includes across the graph
# therefore fails to compile ("No such file or directory"), and tests/layering proves it.
# A layer may only depend on layers declared before it, so the graph cannot grow a cycle.
# LIBS are third-party targets, private to the layer (only their link step propagates).
#
# Every layer is compiled once, position-independent and with hidden visibility, and serves
# both the shared libiotx.so (which takes whole layers, see src/CMakeLists.txt) and the tool,
# tests, benchmarks and Python module, which link the static layers they need.
set_property(GLOBAL PROPERTY IOTX_LAYERS "")

function(iotx_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LIBS;PUBLIC_LIBS" ${ARGN})
  get_property(declared GLOBAL PROPERTY IOTX_LAYERS)
  foreach(dep IN LISTS ARG_DEPENDS)
    if(NOT dep IN_LIST declared)
      message(FATAL_ERROR "layer ${name} depends on ${dep}, which is not declared before it: "
        "layers form a one-way graph (see docs/architecture.md)")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY IOTX_LAYERS ${name})

  set(scope ${PROJECT_BINARY_DIR}/include-scopes/${name})
  file(MAKE_DIRECTORY ${scope})
  file(REMOVE ${scope}/${name})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${scope}/${name} SYMBOLIC)

  add_library(iotx_${name} STATIC ${ARG_SOURCES})
  set_target_properties(iotx_${name} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(iotx_${name} PUBLIC cxx_std_20)
  target_include_directories(iotx_${name} PUBLIC
    $<BUILD_INTERFACE:${scope}>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  list(TRANSFORM ARG_DEPENDS PREPEND iotx_ OUTPUT_VARIABLE dep_targets)
  target_link_libraries(iotx_${name}
    PUBLIC ${dep_targets} ${ARG_PUBLIC_LIBS}
    PRIVATE ${ARG_LIBS} iotx_warnings)
  set_property(GLOBAL PROPERTY IOTX_LAYER_${name}_DEPENDS ${ARG_DEPENDS})
endfunction()

# Writes the declared graph to build/iotx-layers.txt, one line a layer, "name: deps...", in
# declaration order, for tests/layering (which proves the include scopes hold).
function(iotx_write_layer_graph)
  get_property(layers GLOBAL PROPERTY IOTX_LAYERS)
  set(text "")
  foreach(layer IN LISTS layers)
    get_property(deps GLOBAL PROPERTY IOTX_LAYER_${layer}_DEPENDS)
    list(JOIN deps " " deps)
    string(APPEND text "${layer}: ${deps}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/iotx-layers.txt "${text}")
endfunction()
