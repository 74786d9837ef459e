read -a arr <<< "one two three"; echo ${arr[1]} ${#arr[@]}
