// Syntax check of Nextflow files with Groovy's own parser (Nextflow scripts, configs and nf-test
// files are Groovy): each file named on the command line is parsed and converted to an AST,
// without resolving names or running anything. Prints one line per file that does not parse
// and exits 1 if any. Run: groovy parse.groovy FILE...
import org.codehaus.groovy.control.CompilationUnit
import org.codehaus.groovy.control.Phases

int bad = 0
for (path in args) {
    def unit = new CompilationUnit()
    unit.addSource(new File(path))
    try {
        unit.compile(Phases.CONVERSION)
    } catch (Exception e) {
        System.err.println("${path}: ${e.message.readLines().findAll { it.trim() }.join(' ')}")
        bad++
    }
}
println "groovy ${GroovySystem.version}: ${args.size() - bad} of ${args.size()} files parse"
System.exit(bad ? 1 : 0)
