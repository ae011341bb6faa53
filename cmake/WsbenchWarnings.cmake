# Warnings are errors in our code; generated code (gSOAP, protobuf) is
# compiled without this function so its warnings stay the library's.
function(wsb_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Wunused -Woverloaded-virtual
    -Wimplicit-fallthrough -Werror)
endfunction()
