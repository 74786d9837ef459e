true | false | true; echo ${PIPESTATUS[@]}
