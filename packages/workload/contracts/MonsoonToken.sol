// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * @title MonsoonToken
 * @notice A plain ERC-20 for the Monsoon load test. It has no constructor and no mint: its
 *         whole state is written into the genesis alloc by the workload package, so the storage
 *         layout below is part of its interface and must not change.
 *
 * Storage layout (solc assigns slots in declaration order; constants take none):
 *   slot 0  balances      mapping(address => uint256)
 *                         balances[a] lives at keccak256(pad32(a) ‖ pad32(0))
 *   slot 1  allowances    mapping(address => mapping(address => uint256))
 *                         allowances[o][s] lives at keccak256(pad32(s) ‖ keccak256(pad32(o) ‖ pad32(1)))
 *   slot 2  totalSupply   uint256, must equal the sum of all balances
 *
 * Errors are the ERC-6093 ones, so a revert says what was expected and what was found.
 */
contract MonsoonToken {
    mapping(address => uint256) private balances;
    mapping(address => mapping(address => uint256)) private allowances;
    uint256 public totalSupply;

    string public constant name = "Monsoon Token";
    string public constant symbol = "MNS";
    uint8 public constant decimals = 18;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// `sender` holds `balance`, less than the `needed` amount.
    error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
    /// `spender` may move `allowance` of the owner's tokens, less than the `needed` amount.
    error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    /// Tokens cannot be sent to the zero address (that would silently burn them).
    error ERC20InvalidReceiver(address receiver);

    function balanceOf(address account) external view returns (uint256) {
        return balances[account];
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return allowances[owner][spender];
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowances[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    /// An allowance of type(uint256).max is never decreased, as in OpenZeppelin's ERC20.
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowances[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert ERC20InsufficientAllowance(msg.sender, allowed, value);
            unchecked {
                allowances[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) private {
        if (to == address(0)) revert ERC20InvalidReceiver(to);
        uint256 fromBalance = balances[from];
        if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
        unchecked {
            balances[from] = fromBalance - value;
        }
        // Checked: the genesis, not a mint, establishes sum(balances) == totalSupply, so the
        // overflow guard is kept rather than trusted away.
        balances[to] += value;
        emit Transfer(from, to, value);
    }
}
