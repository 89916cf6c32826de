# Debugger sessions: each tests/debugger/cases/NAME.args (+ NAME.in REPL input) runs `dtsim` in the
# source root and must print exactly NAME.expected (label e2e). pty_drive.py drives the readline
# front end through a pseudo-terminal (history across runs, tab completion).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  file(GLOB DTSIM_DEBUGGER_CASES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cases/*.args)
  foreach(args ${DTSIM_DEBUGGER_CASES})
    get_filename_component(name ${args} NAME_WE)
    get_filename_component(dir ${args} DIRECTORY)
    add_test(NAME debugger_${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_session.py --dtsim $<TARGET_FILE:dtsim>
                     --root ${CMAKE_SOURCE_DIR} --case ${dir}/${name})
    set_tests_properties(debugger_${name} PROPERTIES LABELS e2e TIMEOUT 120)
  endforeach()
  add_test(NAME debugger_readline_pty
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/pty_drive.py --dtsim $<TARGET_FILE:dtsim>
                   --root ${CMAKE_SOURCE_DIR})
  set_tests_properties(debugger_readline_pty PROPERTIES LABELS e2e TIMEOUT 120)
endif()
