import Foundation
import PackagePlugin

/// Writes the commit the build is made from into the `slackindex` executable (`BuildCommit.swift`), for
/// `slackindex --version`: `git rev-parse` before every build, the file rewritten only when the commit changes (so
/// an unchanged commit recompiles nothing). "unknown" outside a git checkout; "-dirty" with uncommitted changes to
/// tracked files.
@main
struct CommitStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Generated")
        let script = """
            mkdir -p "$1"
            commit=$(git -C "$2" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C "$2" status --porcelain --untracked-files=no 2>/dev/null | head -c 1)" ]; then
                commit="$commit-dirty"
            fi
            line="let buildCommit = \\"$commit\\""
            [ "$(cat "$1/BuildCommit.swift" 2>/dev/null)" = "$line" ] || printf '%s\\n' "$line" > "$1/BuildCommit.swift"
            """
        return [
            .prebuildCommand(
                displayName: "Stamping the build's commit",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", output.path, context.package.directoryURL.path],
                outputFilesDirectory: output)
        ]
    }
}
